import type { AuditTargetType } from '@hostctl/db';

/** The resources a route's path can name, by their path segment. */
const RESOURCES: Record<string, AuditTargetType> = {
  services: 'service',
  deployments: 'deployment',
  runs: 'run',
  customers: 'customer',
  users: 'user',
  'api-keys': 'api_key',
  'variable-groups': 'variable_group',
};

/**
 * What a route acts on, read from its pattern alone, so that a route added later is classified
 * without anyone listing it:
 * - `item`: exactly one path parameter, right after a known resource segment
 *   (`/api/services/:id/redeploy` → the service `:id`, `/api/deployments/:id/cancel` → the deployment);
 * - `collection`: no parameter (`/api/services`: the list, or a create whose new id the response names);
 * - `other`: anything else (a nested `/:id/…/:childId`, a wildcard, an unknown resource). Deploy
 *   tokens are refused these: the owner of the inner resource cannot be told from the path.
 */
export type RouteTarget =
  | { kind: 'item'; type: AuditTargetType; param: string }
  | { kind: 'collection'; type: AuditTargetType | null }
  | { kind: 'other' };

export function routeTarget(pattern: string): RouteTarget {
  const segments = pattern
    .split('?')[0]!
    .split('/')
    .filter((s) => s !== '');
  const params = segments.flatMap((segment, index) =>
    segment.startsWith(':') || segment.includes('*') ? [index] : [],
  );
  if (params.length === 0) {
    const known = segments.filter((segment) => RESOURCES[segment] !== undefined);
    return { kind: 'collection', type: RESOURCES[known[known.length - 1] ?? ''] ?? null };
  }
  const at = params[0]!;
  const param = segments[at]!;
  const type = RESOURCES[segments[at - 1] ?? ''];
  if (params.length > 1 || type === undefined || !/^:[A-Za-z0-9_]+$/.test(param)) return { kind: 'other' };
  return { kind: 'item', type, param: param.slice(1) };
}

/**
 * The audit action name of a route, unless it declares one: `services.redeploy` for a verb after an
 * item, `services.update` for PATCH on an item, `auth.api_keys.create` for POST on a collection.
 */
export function defaultActionName(method: string, pattern: string): string {
  const segments = pattern
    .split('/')
    .filter((s) => s !== '' && s !== 'api')
    .map((s) => s.replace(/-/g, '_'));
  const names = segments.filter((s) => !s.startsWith(':'));
  const last = segments[segments.length - 1] ?? '';
  const afterParam = segments.length >= 2 && (segments[segments.length - 2] ?? '').startsWith(':');
  if (method === 'POST' && afterParam && !last.startsWith(':')) return names.join('.');
  const verb: Record<string, string> = { POST: 'create', PUT: 'replace', PATCH: 'update', DELETE: 'delete' };
  return [...names, verb[method] ?? method.toLowerCase()].join('.');
}
