import { uniqueName } from '../test-support/harness.js';
import { adminsOnly, fixed, one, readA, type RouteEntry } from './route-expectations.js';

// Quotas (docs/quotas.md): a customer's own principals read its quota; only unscoped admins set
// quotas and plans (a scoped admin is refused: 403).
export const QUOTA_ROUTES: Record<string, RouteEntry> = {
  'GET /api/customers/:id/quota': one('customer A', readA(200), (f) => ({
    url: `/api/customers/${f.customerA}/quota`,
  })),
  // Metered usage (docs/metering.md) is read like the quota: the customer's own principals.
  'GET /api/customers/:id/usage': one('customer A', readA(200), (f) => ({
    url: `/api/customers/${f.customerA}/usage`,
  })),
  'PUT /api/customers/:id/quota': one('customer A → the default plan', adminsOnly([200, 403, 403]), (f) => ({
    url: `/api/customers/${f.customerA}/quota`,
    payload: { plan: 'default', overrides: {} },
  })),
  'GET /api/quota-plans': one('list', adminsOnly([200, 403, 403]), fixed('/api/quota-plans')),
  'PUT /api/quota-plans/:name': one('a fresh plan', adminsOnly([201, 403, 403]), () => ({
    url: `/api/quota-plans/${uniqueName('plan')}`,
    payload: { limits: { services: 10, cpus: 2.5, memory_mb: null } },
  })),
  'DELETE /api/quota-plans/:name': one('an unused plan', adminsOnly([204, 403, 403]), async (f) => ({
    url: `/api/quota-plans/${await f.freshQuotaPlan()}`,
  })),
};
