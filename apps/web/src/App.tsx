import { useEffect, type ReactNode } from 'react';
import type { Permission } from '@hostctl/auth-policy/permissions';
import type { Me } from '@hostctl/api-client';
import { ProblemAlert } from './components/feedback.tsx';
import { parseRoute, type Route } from './routes.ts';
import { useLocation } from './router.tsx';
import { ApiKeysScreen } from './screens/ApiKeys.tsx';
import { CreateServiceScreen } from './screens/CreateService.tsx';
import { CertificatesScreen } from './screens/Certificates.tsx';
import { CustomersScreen } from './screens/Customers.tsx';
import { OverviewScreen } from './screens/Overview.tsx';
import { ServicesScreen } from './screens/Services.tsx';
import { SignedOutScreen } from './screens/SignedOut.tsx';
import { UsageScreen } from './screens/Usage.tsx';
import { UsersScreen } from './screens/Users.tsx';
import { VariableGroupScreen } from './groups/VariableGroupScreen.tsx';
import { VariableGroupsScreen } from './groups/VariableGroupsScreen.tsx';
import { ServiceScreen } from './service/ServiceScreen.tsx';
import { allows, platformWide } from './permissions.ts';
import { useMe } from './session.ts';
import { Shell } from './Shell.tsx';

export function App() {
  const location = useLocation();
  const me = useMe();
  const route = parseRoute(location.pathname);

  if (me.isPending) {
    return (
      <main aria-busy="true" className="centered muted">
        Loading…
      </main>
    );
  }
  if (me.error) {
    return (
      <main className="centered">
        <h1>hostctl</h1>
        <ProblemAlert error={me.error} />
      </main>
    );
  }
  if (me.data === null || route.screen === 'signed-out') {
    return <SignedOutScreen returnTo={location.pathname + location.search} signedIn={me.data !== null} />;
  }
  return (
    <Shell me={me.data} route={route}>
      <Screen route={route} me={me.data} />
    </Shell>
  );
}

/** Which permission a screen needs; the others are open to every signed-in user. */
const NEEDS: Partial<Record<Route['screen'], Permission>> = {
  create: 'services:create',
  customers: 'customers:read',
  usage: 'customers:read',
  users: 'users:manage',
  'variable-groups': 'services:read',
  'variable-group': 'services:read',
};

/** Screens of the platform itself: the role's permission and no customer scope (the API's rule). */
const PLATFORM_WIDE: Partial<Record<Route['screen'], Permission>> = {
  certificates: 'certificates:read',
};

function Screen({ route, me }: { route: Route; me: Me }) {
  const needed = NEEDS[route.screen];
  if (needed && !allows(me, needed)) {
    return <Message title="Not allowed">Your role ({me.role}) cannot open this page.</Message>;
  }
  const platform = PLATFORM_WIDE[route.screen];
  if (platform && !platformWide(me, platform)) {
    return <Message title="Not allowed">This page is for the platform’s own operators.</Message>;
  }
  switch (route.screen) {
    case 'overview':
      return <OverviewScreen />;
    case 'services':
      return <ServicesScreen me={me} />;
    case 'create':
      return <CreateServiceScreen me={me} />;
    case 'service':
      return <ServiceScreen id={route.id} tab={route.tab} me={me} />;
    case 'api-keys':
      return <ApiKeysScreen />;
    case 'customers':
      return <CustomersScreen me={me} />;
    case 'usage':
      return <UsageScreen customerId={route.customerId} me={me} />;
    case 'users':
      return <UsersScreen />;
    case 'certificates':
      return <CertificatesScreen />;
    case 'variable-groups':
      return <VariableGroupsScreen me={me} />;
    case 'variable-group':
      return <VariableGroupScreen id={route.id} me={me} />;
    case 'signed-out':
    case 'not-found':
      return <Message title="Page not found">There is nothing at this address.</Message>;
  }
}

function Message({ title, children }: { title: string; children: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · hostctl`;
  }, [title]);
  return (
    <>
      <h1>{title}</h1>
      <p>{children}</p>
    </>
  );
}
