import type { Me } from '@hostctl/api-client';
import type { Route } from './routes.ts';
import { allows, platformWide } from './permissions.ts';

export interface NavItem {
  to: string;
  label: string;
  /** The screens under this item, for aria-current. */
  screens: Route['screen'][];
}

type Caller = Pick<Me, 'role' | 'customer_id'>;

const NAV: (NavItem & { visible: (me: Caller) => boolean })[] = [
  { to: '/', label: 'Overview', screens: ['overview'], visible: () => true },
  { to: '/services', label: 'Services', screens: ['services', 'service'], visible: () => true },
  {
    to: '/variable-groups',
    label: 'Variable groups',
    screens: ['variable-groups', 'variable-group'],
    visible: (me) => allows(me, 'services:read'),
  },
  {
    to: '/services/new',
    label: 'Create',
    screens: ['create'],
    visible: (me) => allows(me, 'services:create'),
  },
  {
    to: '/api-keys',
    label: 'API keys',
    screens: ['api-keys'],
    visible: (me) => allows(me, 'api_keys:manage'),
  },
  {
    to: '/customers',
    label: 'Customers',
    screens: ['customers', 'usage'],
    visible: (me) => allows(me, 'customers:read'),
  },
  { to: '/users', label: 'Users', screens: ['users'], visible: (me) => allows(me, 'users:manage') },
  {
    to: '/certificates',
    label: 'Certificates',
    screens: ['certificates'],
    visible: (me) => platformWide(me, 'certificates:read'),
  },
];

/** The main navigation for a caller: only what their role may open. */
export function navFor(me: Caller): NavItem[] {
  return NAV.filter((item) => item.visible(me)).map(({ to, label, screens }) => ({ to, label, screens }));
}
