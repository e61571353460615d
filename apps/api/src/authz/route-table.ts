import { randomUUID } from 'node:crypto';
import type { Role } from '@hostctl/domain';
import { uniqueName } from '../test-support/harness.js';
import type { Fixtures } from './authz-fixtures.js';
import { BACKUP_ROUTES } from './backup-routes.table.js';
import { NOTIFICATION_ROUTES } from './notification-routes.table.js';
import { QUOTA_ROUTES } from './quota-routes.table.js';
import { RUN_ROUTES } from './run-routes.table.js';
import { EXEC_ROUTES } from './exec-routes.table.js';
import { SECRET_VARIABLE_ROUTES } from './secret-variable-routes.table.js';
// The WebSocket side of the streaming routes, called by the same tests.
export { SOCKET_TABLE } from './socket-routes.table.js';
import {
  adminsOnly,
  platformOnly,
  all,
  fixed,
  one,
  publicAll,
  readA,
  writeA,
  type Expected,
  type RouteEntry,
  type Statuses,
} from './route-expectations.js';

/**
 * Expected status of every route for every role × scope (docs/auth.md#permission-matrix). Each
 * role maps to [unscoped, own customer, other customer]: "own" callers are scoped to customer A,
 * which owns every target; "other" callers are scoped to customer B. `anonymous` is the answer
 * without credentials (401 unless the route is public).
 *
 * route-table.authz.test.ts enumerates the registered routes and fails for a route without an
 * entry here, or an entry whose route no longer exists: adding a route means deciding this table.
 */
export type { Statuses, Expected, Request, RouteCase, RouteEntry } from './route-expectations.js';

const onFreshService = (suffix: string, payload?: object) => async (f: Fixtures) => ({
  url: `/api/services/${await f.freshService()}${suffix}`,
  ...(payload ? { payload } : {}),
});
const composeOf = (customerId: string) => ({
  name: uniqueName('authz'),
  customer_id: customerId,
  deploy_method: 'compose',
  compose: 'services:\n  web:\n    image: local/busybox:1\n    ports:\n      - "8080"\n',
});
const newUser = (role: Role, customerId: string | null) => ({
  email: `${uniqueName('new')}@authz.example.test`,
  name: 'New user',
  role,
  customer_id: customerId,
});

export const ROUTE_TABLE: Record<string, RouteEntry> = {
  // Probes, metrics and API docs: public, the same answer for everyone.
  'GET /livez': {
    public: true,
    cases: [{ label: 'probe', request: fixed('/livez'), expect: publicAll(200) }],
  },
  'GET /readyz': {
    public: true,
    cases: [{ label: 'probe', request: fixed('/readyz'), expect: publicAll(200) }],
  },
  'GET /metrics': {
    public: true,
    cases: [{ label: 'scrape', request: fixed('/metrics'), expect: publicAll(200) }],
  },
  'GET /api/openapi.json': {
    public: true,
    cases: [{ label: 'document', request: fixed('/api/openapi.json'), expect: publicAll(200) }],
  },
  'GET /api/docs': {
    public: true,
    cases: [{ label: 'page', request: fixed('/api/docs'), expect: publicAll(200) }],
  },
  'GET /api/docs/init.js': {
    public: true,
    cases: [{ label: 'script', request: fixed('/api/docs/init.js'), expect: publicAll(200) }],
  },
  'GET /api/docs/assets/:file': {
    public: true,
    cases: [{ label: 'asset', request: fixed('/api/docs/assets/swagger-ui.css'), expect: publicAll(200) }],
  },
  // The web dashboard: public files. The harness points DASHBOARD_DIR at nothing, so / answers
  // "not built" and other paths without Accept: text/html the API's 404 (dashboard.test.ts covers a build).
  'GET /': {
    public: true,
    cases: [{ label: 'not built', request: fixed('/'), expect: publicAll(503) }],
  },
  'GET /*': {
    public: true,
    cases: [{ label: 'not a page', request: fixed('/services'), expect: publicAll(404) }],
  },

  // Sign-in: public. An off-site redirect is refused before the provider is contacted, and a
  // callback without the pre-login cookie is refused before anything else: deterministic answers.
  'GET /api/auth/login': {
    public: true,
    cases: [
      {
        label: 'off-site redirect',
        request: fixed('/api/auth/login?redirect=//evil.test'),
        expect: publicAll(400),
      },
    ],
  },
  'GET /api/auth/callback': {
    public: true,
    cases: [
      {
        label: 'no login cookie',
        request: fixed('/api/auth/callback?code=x&state=y'),
        expect: publicAll(400),
      },
    ],
  },
  'POST /api/auth/logout': {
    cases: [
      {
        label: 'with a session',
        request: () => ({ url: '/api/auth/logout', session: true }),
        expect: all(200),
      },
      { label: 'with an API key', request: fixed('/api/auth/logout'), expect: all(403) },
    ],
  },
  'GET /api/auth/me': one('own profile', all(200), fixed('/api/auth/me')),

  // API keys: everyone manages their own; a key with manage mints only limited keys, within its
  // own scope (docs/auth.md#deploy-tokens).
  'POST /api/auth/api-keys': {
    cases: [
      {
        label: 'with a session',
        request: () => ({ url: '/api/auth/api-keys', payload: { name: 'authz' }, session: true }),
        expect: all(201),
      },
      {
        label: 'with an API key, an unlimited key',
        request: () => ({ url: '/api/auth/api-keys', payload: { name: 'authz' } }),
        expect: all(403),
      },
      {
        label: "with an API key, a read + deploy key of A's service",
        request: (f) => ({
          url: '/api/auth/api-keys',
          payload: { name: 'authz', service_id: f.serviceA, actions: ['read', 'deploy'] },
        }),
        expect: writeA(201),
      },
    ],
  },
  'GET /api/auth/api-keys': one('own keys', all(200), fixed('/api/auth/api-keys')),
  'DELETE /api/auth/api-keys/:id': {
    cases: [
      {
        label: "a viewer of A's key",
        request: async (f) => ({
          url: `/api/auth/api-keys/${(await f.freshUser('viewer', f.customerA)).keyId}`,
        }),
        expect: adminsOnlyOr404([204, 204, 404]),
      },
      {
        label: "an admin of A's key",
        request: async (f) => ({
          url: `/api/auth/api-keys/${(await f.freshUser('admin', f.customerA)).keyId}`,
        }),
        expect: adminsOnlyOr404([204, 404, 404]),
      },
      {
        label: "an unscoped user's key",
        request: async (f) => ({ url: `/api/auth/api-keys/${(await f.freshUser('operator', null)).keyId}` }),
        expect: adminsOnlyOr404([204, 404, 404]),
      },
    ],
  },

  'GET /api/templates': one('catalog', all(200), fixed('/api/templates')),

  // Services of customer A.
  'GET /api/services': one('list (filtered, see scope tests)', all(200), fixed('/api/services')),
  'GET /api/services/:id': one('detail', readA(200), (f) => ({ url: `/api/services/${f.serviceA}` })),
  'GET /api/services/:id/events': one('events', readA(200), (f) => ({
    url: `/api/services/${f.serviceA}/events`,
  })),
  // The resource history (docs/health-and-resources.md#history) is read like the detail.
  'GET /api/services/:id/metrics': one('metrics', readA(200), (f) => ({
    url: `/api/services/${f.serviceA}/metrics`,
  })),
  'GET /api/services/:id/logs': one('logs', readA(200), (f) => ({ url: `/api/services/${f.serviceA}/logs` })),
  'GET /api/deployments/:id': one('deployment', readA(200), (f) => ({
    url: `/api/deployments/${f.deploymentA}`,
  })),
  'POST /api/services': one(
    'create for A',
    { admin: [201, 201, 403], operator: [201, 201, 403], viewer: [403, 403, 403] },
    (f) => ({ url: '/api/services', payload: composeOf(f.customerA) }),
  ),
  'POST /api/services/:id/start': one('start', writeA(200), onFreshService('/start')),
  'POST /api/services/:id/stop': one('stop', writeA(200), onFreshService('/stop')),
  'POST /api/services/:id/restart': one('restart', writeA(200), onFreshService('/restart')),
  'POST /api/services/:id/redeploy': one('redeploy', writeA(200), onFreshService('/redeploy')),
  'POST /api/services/:id/rollback': one('rollback', writeA(200), async (f) => ({
    url: `/api/services/${await f.freshReleases()}/rollback`,
  })),
  'GET /api/services/:id/deployments': one('history', readA(200), (f) => ({
    url: `/api/services/${f.serviceA}/deployments`,
  })),
  'POST /api/deployments/:id/cancel': one('cancel a queued deployment', writeA(200), async (f) => ({
    url: `/api/deployments/${await f.freshDeployment()}/cancel`,
  })),
  'PATCH /api/services/:id': one(
    'change variables',
    writeA(200),
    onFreshService('', { variables: { AUTHZ: '1' } }),
  ),
  'DELETE /api/services/:id': one('delete', writeA(204), onFreshService('')),

  // Push webhooks (docs/webhooks.md): managed like the service's settings, read like the service.
  // The receiver is public: its credential is the hook id and the signature.
  'POST /api/services/:id/webhook': one('create or rotate', writeA(201), async (f) => ({
    url: `/api/services/${await f.freshGitService()}/webhook`,
  })),
  'GET /api/services/:id/webhook': one('metadata', readA(200), (f) => ({
    url: `/api/services/${f.serviceA}/webhook`,
  })),
  'DELETE /api/services/:id/webhook': one('remove', writeA(204), onFreshService('/webhook')),
  'GET /api/services/:id/webhook-deliveries': one('delivery log', readA(200), (f) => ({
    url: `/api/services/${f.serviceA}/webhook-deliveries`,
  })),
  'POST /hooks/push/:hook_id': {
    public: true,
    cases: [
      {
        label: 'unknown hook',
        request: () => ({ url: `/hooks/push/${randomUUID()}`, payload: { ref: 'refs/heads/main' } }),
        expect: publicAll(404),
      },
    ],
  },

  // Custom-domain ownership (docs/tls.md#custom-domains): read like the service, checked like a
  // change to it. The target's domain is verified already, so the check answers without DNS.
  'GET /api/services/:id/custom-domains': one('ownership state', readA(200), (f) => ({
    url: `/api/services/${f.serviceA}/custom-domains`,
  })),
  'POST /api/services/:id/custom-domains/:domain/verify': one('check now', writeA(200), async (f) => {
    const id = await f.freshService();
    const domain = `${uniqueName('authz')}.example.test`;
    await f.h.container.db.service.update({ where: { id }, data: { customDomains: [domain] } });
    await f.h.container.db.customDomainVerification.update({
      where: { serviceId_name: { serviceId: id, name: domain } },
      data: { status: 'verified', verifiedAt: new Date() },
    });
    return { url: `/api/services/${id}/custom-domains/${domain}/verify` };
  }),

  // Customers: everyone reads what is in scope; only unscoped admins and operators create.
  'GET /api/customers': one('list (filtered, see scope tests)', all(200), fixed('/api/customers')),
  'GET /api/customers/:id': one('customer A', readA(200), (f) => ({ url: `/api/customers/${f.customerA}` })),
  'POST /api/customers': one(
    'create',
    { admin: [201, 403, 403], operator: [201, 403, 403], viewer: [403, 403, 403] },
    () => ({ url: '/api/customers', payload: { name: uniqueName('authz') } }),
  ),

  // The audit log: admins only; a scoped admin sees its customer's events (audit.test.ts).
  'GET /api/audit-events': one(
    'list (filtered, see audit tests)',
    adminsOnly([200, 200, 200]),
    fixed('/api/audit-events'),
  ),

  // Swarm nodes: platform-wide, so unscoped admins and operators only (docs/multi-host.md#nodes-api).
  'GET /api/nodes': one('list', platformOnly(200), fixed('/api/nodes')),
  // The platform's certificates (docs/tls.md): platform-wide like nodes.
  'GET /api/certificates': one('list', platformOnly(200), fixed('/api/certificates')),
  'GET /api/nodes/:id': one('a node', platformOnly(200), (f) => ({ url: `/api/nodes/${f.node}` })),
  'POST /api/nodes/:id/drain': one('a node', platformOnly(202), (f) => ({
    url: `/api/nodes/${f.node}/drain`,
  })),
  'POST /api/nodes/:id/activate': one('a node', platformOnly(202), (f) => ({
    url: `/api/nodes/${f.node}/activate`,
  })),

  // Users: admins only, scoped admins within their customer and below admin.
  'GET /api/users': one('list (filtered, see scope tests)', adminsOnly([200, 200, 200]), fixed('/api/users')),
  'POST /api/users': {
    cases: [
      {
        label: 'a viewer of A',
        request: (f) => ({ url: '/api/users', payload: newUser('viewer', f.customerA) }),
        expect: adminsOnly([201, 201, 403]),
      },
      {
        label: 'an admin of A',
        request: (f) => ({ url: '/api/users', payload: newUser('admin', f.customerA) }),
        expect: adminsOnly([201, 403, 403]),
      },
      {
        label: 'an unscoped admin',
        request: () => ({ url: '/api/users', payload: newUser('admin', null) }),
        expect: adminsOnly([201, 403, 403]),
      },
    ],
  },
  'PATCH /api/users/:id': {
    cases: [
      {
        label: 'an operator of A → viewer',
        request: async (f) => ({
          url: `/api/users/${(await f.freshUser('operator', f.customerA)).id}`,
          payload: { role: 'viewer' },
        }),
        expect: adminsOnly([200, 200, 404]),
      },
      {
        label: 'a viewer of A → operator',
        request: async (f) => ({
          url: `/api/users/${(await f.freshUser('viewer', f.customerA)).id}`,
          payload: { role: 'operator' },
        }),
        expect: adminsOnly([200, 403, 404]),
      },
      {
        label: 'a viewer of A → admin',
        request: async (f) => ({
          url: `/api/users/${(await f.freshUser('viewer', f.customerA)).id}`,
          payload: { role: 'admin' },
        }),
        expect: adminsOnly([200, 403, 404]),
      },
      {
        label: 'a viewer of A → unscoped',
        request: async (f) => ({
          url: `/api/users/${(await f.freshUser('viewer', f.customerA)).id}`,
          payload: { customer_id: null },
        }),
        expect: adminsOnly([200, 403, 404]),
      },
      {
        label: 'an admin of A, rename',
        request: async (f) => ({
          url: `/api/users/${(await f.freshUser('admin', f.customerA)).id}`,
          payload: { name: 'Renamed' },
        }),
        expect: adminsOnly([200, 403, 404]),
      },
      {
        label: 'an unscoped viewer, rename',
        request: async (f) => ({
          url: `/api/users/${(await f.freshUser('viewer', null)).id}`,
          payload: { name: 'Renamed' },
        }),
        expect: adminsOnly([200, 404, 404]),
      },
      {
        label: 'self → unscoped',
        request: (_f, caller) => ({
          url: `/api/users/${caller?.userId ?? 'none'}`,
          payload: { customer_id: null },
        }),
        expect: adminsOnly([200, 403, 403]),
      },
      {
        label: 'self → viewer',
        request: (_f, caller) => ({
          url: `/api/users/${caller?.userId ?? 'none'}`,
          payload: { role: 'viewer' },
        }),
        expect: adminsOnly([403, 403, 403]),
      },
      {
        label: 'self → admin',
        request: (_f, caller) => ({
          url: `/api/users/${caller?.userId ?? 'none'}`,
          payload: { role: 'admin' },
        }),
        expect: adminsOnly([200, 200, 200]),
      },
    ],
  },
  ...NOTIFICATION_ROUTES,
  ...RUN_ROUTES,
  ...EXEC_ROUTES,
  ...QUOTA_ROUTES,
  ...BACKUP_ROUTES,
  ...SECRET_VARIABLE_ROUTES,
};

/** Revoking someone else's key: admins per `admin`, everyone else cannot see it (404, never 403). */
function adminsOnlyOr404(admin: Statuses): Expected {
  return { admin, operator: [404, 404, 404], viewer: [404, 404, 404] };
}
