import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMPOSE_BUSYBOX,
  createHarness,
  json,
  uniqueName,
  type Harness,
} from '../../test-support/harness.js';

/**
 * Route × role × customer scope. "ok" means the caller got past authorization (any status other
 * than 401/403/404); the exact success statuses are covered by the flow tests.
 */
type Caller = 'admin' | 'operator' | 'viewerOwn' | 'viewerUnscoped' | 'operatorOther' | 'adminOwnCustomer';
type Expect = 'ok' | 403 | 404;

let h: Harness;
const auth: Record<Caller, string> = {} as Record<Caller, string>;
let customerA: string;
let serviceA: string;

beforeAll(async () => {
  h = await createHarness();
  customerA = (await h.customer()).id;
  const customerB = (await h.customer()).id;
  auth.admin = (await h.user('admin')).auth;
  auth.operator = (await h.user('operator')).auth;
  auth.viewerOwn = (await h.user('viewer', customerA)).auth;
  auth.viewerUnscoped = (await h.user('viewer')).auth;
  auth.operatorOther = (await h.user('operator', customerB)).auth;
  auth.adminOwnCustomer = (await h.user('admin', customerA)).auth;
  const created = await h.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { authorization: auth.admin },
    payload: {
      name: uniqueName('authz'),
      customer_id: customerA,
      deploy_method: 'compose',
      compose: COMPOSE_BUSYBOX,
    },
  });
  expect(created.statusCode).toBe(201);
  serviceA = json<{ id: string }>(created).id;
});
afterAll(async () => h.close());

interface RouteCase {
  label: string;
  method: 'GET' | 'POST' | 'DELETE';
  url: () => string;
  payload?: () => unknown;
  expect: Record<Caller, Expect>;
}

const READ: Record<Caller, Expect> = {
  admin: 'ok',
  operator: 'ok',
  viewerOwn: 'ok',
  viewerUnscoped: 404,
  operatorOther: 404,
  adminOwnCustomer: 'ok',
};
const WRITE: Record<Caller, Expect> = {
  admin: 'ok',
  operator: 'ok',
  viewerOwn: 403,
  viewerUnscoped: 403,
  operatorOther: 404,
  adminOwnCustomer: 'ok',
};

const ROUTES: RouteCase[] = [
  { label: 'detail', method: 'GET', url: () => `/api/services/${serviceA}`, expect: READ },
  { label: 'events', method: 'GET', url: () => `/api/services/${serviceA}/events`, expect: READ },
  ...(['start', 'stop', 'restart', 'redeploy'] as const).map((action) => ({
    label: action,
    method: 'POST' as const,
    url: () => `/api/services/${serviceA}/${action}`,
    expect: WRITE,
  })),
  {
    label: 'create for customer A',
    method: 'POST',
    url: () => '/api/services',
    payload: () => ({
      name: uniqueName('authz'),
      customer_id: customerA,
      deploy_method: 'compose',
      compose: COMPOSE_BUSYBOX,
    }),
    expect: { ...WRITE, operatorOther: 403 },
  },
];

describe.each(ROUTES)('$method $label', (route) => {
  it.each(Object.keys(READ) as Caller[])('as %s', async (caller) => {
    const response = await h.app.inject({
      method: route.method,
      url: route.url(),
      headers: { authorization: auth[caller] },
      ...(route.payload ? { payload: route.payload() as object } : {}),
    });
    const expected = route.expect[caller];
    if (expected === 'ok') expect([401, 403, 404]).not.toContain(response.statusCode);
    else expect(response.statusCode).toBe(expected);
  });
});

describe('list scoping', () => {
  const listIds = async (caller: Caller, query = '') => {
    const response = await h.app.inject({
      url: `/api/services?per_page=100${query}`,
      headers: { authorization: auth[caller] },
    });
    expect(response.statusCode).toBe(200);
    return json<{ data: { id: string; customer_id: string }[] }>(response).data;
  };

  it('a customer-scoped viewer sees only its customer', async () => {
    const rows = await listIds('viewerOwn');
    expect(rows.map((r) => r.id)).toContain(serviceA);
    expect(rows.every((r) => r.customer_id === customerA)).toBe(true);
  });

  it('a scoped operator of another customer does not see it, even when filtering for it', async () => {
    expect((await listIds('operatorOther')).map((r) => r.id)).not.toContain(serviceA);
    expect(await listIds('operatorOther', `&customer_id=${customerA}`)).toEqual([]);
  });

  it('a viewer without a customer sees nothing', async () => {
    expect(await listIds('viewerUnscoped')).toEqual([]);
  });

  it('a scoped admin is limited to its customer too', async () => {
    const rows = await listIds('adminOwnCustomer');
    expect(rows.every((r) => r.customer_id === customerA)).toBe(true);
  });
});

describe('DELETE', () => {
  it.each(['viewerOwn', 'viewerUnscoped', 'operatorOther'] as const)('refused for %s', async (caller) => {
    const response = await h.app.inject({
      method: 'DELETE',
      url: `/api/services/${serviceA}`,
      headers: { authorization: auth[caller] },
    });
    expect(response.statusCode).toBe(WRITE[caller]);
  });
});
