/** The dashboard's screens, parsed from the location path (one place decides what a URL shows). */
export type ServiceTab =
  'overview' | 'deployments' | 'logs' | 'jobs' | 'terminal' | 'backups' | 'events' | 'settings';
export const SERVICE_TABS: readonly ServiceTab[] = [
  'overview',
  'deployments',
  'logs',
  'jobs',
  'terminal',
  'backups',
  'events',
  'settings',
];

export type Route =
  | { screen: 'overview' }
  | { screen: 'services' }
  | { screen: 'create' }
  | { screen: 'service'; id: string; tab: ServiceTab }
  | { screen: 'api-keys' }
  | { screen: 'customers' }
  | { screen: 'usage'; customerId: string }
  | { screen: 'variable-groups' }
  | { screen: 'variable-group'; id: string }
  | { screen: 'users' }
  | { screen: 'certificates' }
  | { screen: 'signed-out' }
  | { screen: 'not-found' };

const FIXED: Record<string, Route> = {
  '/': { screen: 'overview' },
  '/services': { screen: 'services' },
  '/services/new': { screen: 'create' },
  '/api-keys': { screen: 'api-keys' },
  '/customers': { screen: 'customers' },
  '/users': { screen: 'users' },
  '/certificates': { screen: 'certificates' },
  '/variable-groups': { screen: 'variable-groups' },
  '/signed-out': { screen: 'signed-out' },
};

export function parseRoute(pathname: string): Route {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  const fixed = FIXED[path];
  if (fixed) return fixed;
  const usage = /^\/customers\/([^/]+)\/usage$/.exec(path);
  if (usage?.[1]) {
    const customerId = decoded(usage[1]);
    return customerId === null ? { screen: 'not-found' } : { screen: 'usage', customerId };
  }
  const group = /^\/variable-groups\/([^/]+)$/.exec(path);
  if (group?.[1]) {
    const id = decoded(group[1]);
    return id === null ? { screen: 'not-found' } : { screen: 'variable-group', id };
  }
  const match = /^\/services\/([^/]+)(?:\/([a-z]+))?$/.exec(path);
  if (match?.[1]) {
    const tab = (match[2] ?? 'overview') as ServiceTab;
    const id = decoded(match[1]);
    if (id === null) return { screen: 'not-found' };
    if (SERVICE_TABS.includes(tab)) {
      return { screen: 'service', id, tab };
    }
  }
  return { screen: 'not-found' };
}

/** The path of a service tab: the overview tab is the service's own address. */
export function servicePath(id: string, tab: ServiceTab = 'overview'): string {
  const base = `/services/${encodeURIComponent(id)}`;
  return tab === 'overview' ? base : `${base}/${tab}`;
}

/** A customer's usage and quota page. */
export function usagePath(customerId: string): string {
  return `/customers/${encodeURIComponent(customerId)}/usage`;
}

/** A variable group's page (docs/secrets.md#variable-groups). */
export function variableGroupPath(id: string): string {
  return `/variable-groups/${encodeURIComponent(id)}`;
}

/** A path segment decoded, or null when it is not valid percent-encoding. */
function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
