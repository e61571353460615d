import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { generateApiKey, type KeyAction } from '@hostctl/auth-policy';
import { createHarness, json, type Harness } from '../test-support/harness.js';
import { openSocket } from '../test-support/ws-client.js';
import { buildFixtures, type Fixtures } from './authz-fixtures.js';
import { ROUTE_TABLE, SOCKET_TABLE, type RouteCase } from './route-table.js';

/**
 * Deploy tokens across every route of the route table (docs/auth.md#deploy-tokens). The keys belong
 * to an unscoped admin, who may do everything the table exercises: whatever a key is refused here
 * is refused by its limits. Every target in the table belongs to customer A and is not the key's
 * service, so a route added to the table later is checked against every kind of key by itself.
 */
let h: Harness;
let f: Fixtures;
let ownService: string;
const keys: Record<string, string> = {};

async function limitedKey(
  ownerId: string,
  limits: { serviceId?: string; customerId?: string; actions?: KeyAction[] },
): Promise<string> {
  const { key, digest } = generateApiKey();
  await h.container.db.apiKey.create({
    data: {
      userId: ownerId,
      name: 'limited',
      digest,
      serviceId: limits.serviceId ?? null,
      customerId: limits.customerId ?? null,
      actions: limits.actions ?? [],
    },
  });
  return `Bearer ${key}`;
}

beforeAll(async () => {
  h = await createHarness({ LIFECYCLE_WAIT_MS: '100' });
  f = await buildFixtures(h);
  const owner = f.callers.find((c) => c.role === 'admin' && c.scope === 'unscoped')!;
  ownService = (await h.createService(f.root, { customer_id: f.customerA })).id;
  keys.service = await limitedKey(owner.userId, { serviceId: ownService, customerId: f.customerA });
  keys.deploy = await limitedKey(owner.userId, {
    serviceId: ownService,
    customerId: f.customerA,
    actions: ['read', 'deploy'],
  });
  keys.otherCustomer = await limitedKey(owner.userId, { customerId: f.customerB });
  keys.readOnly = await limitedKey(owner.userId, { actions: ['read'] });
});
afterAll(async () => h?.close());

/** The routes whose answer holds no other service's data: the caller's profile, the catalog, the list narrowed to the key. */
const UNTARGETED_FOR_A_SERVICE_KEY = new Set(['GET /api/auth/me', 'GET /api/templates', 'GET /api/services']);
/** For a customer key the customers list is narrowed too (it acts as its owner scoped to the customer). */
const UNTARGETED_FOR_A_CUSTOMER_KEY = new Set([
  ...UNTARGETED_FOR_A_SERVICE_KEY,
  'GET /api/customers',
  // Subscriptions are per customer: the list is narrowed to the key's customer.
  'GET /api/notification-subscriptions',
  // Variable groups belong to a customer: the list is narrowed to the key's customer.
  'GET /api/variable-groups',
]);
/** Administration: no limited key, whatever its actions, reaches these. */
const ADMINISTRATION_READS = new Set([
  'GET /api/users',
  'GET /api/audit-events',
  'GET /api/auth/api-keys',
  'GET /api/nodes',
  'GET /api/certificates',
  'GET /api/nodes/:id',
  'GET /api/quota-plans',
  // Where a customer's backups go (customers:manage even to read): no deploy token reaches it.
  'GET /api/customers/:id/backup-target',
]);
/** Reads that need the `operate` action (a run's output is what the command printed: docs/jobs.md). */
const OPERATE_READS = new Set([
  'GET /api/services/:id/runs',
  'GET /api/runs/:id',
  'GET /api/runs/:id/output',
  'GET /api/services/:id/schedules',
  'GET /api/schedules/:id',
  'GET /api/schedules/:id/runs',
  // The terminal needs the `exec` action by name (docs/jobs.md#terminal).
  'GET /api/services/:id/exec',
]);

const cases = Object.entries(ROUTE_TABLE)
  .filter(([, entry]) => entry.public !== true)
  .flatMap(([key, entry]) => entry.cases.map((routeCase) => ({ key, routeCase })));

async function status(key: string, routeCase: RouteCase, auth: string): Promise<number> {
  const request = await routeCase.request(f, null);
  // Session-only cases (sign-out, key creation) are not about keys; their key case is in the table.
  if (request.session) return -1;
  const options: InjectOptions = {
    method: key.split(' ')[0],
    url: request.url,
    headers: { authorization: auth },
    ...(request.payload ? { payload: request.payload } : {}),
  };
  const response = await h.app.inject(options);
  if (response.statusCode === 403) {
    // Refusals name the limit, the role, the session rule or the customer: never a bare 403.
    expect(json(response).detail).toMatch(/limited|session|role|own customer/);
  }
  return response.statusCode;
}

describe.each(cases)('$key: $routeCase.label', ({ key, routeCase }) => {
  const adminStatus = routeCase.expect.admin[0];
  const isSessionCase = (s: number) => s === -1;

  it('a service-limited key is refused it unless it holds no other service', async () => {
    for (const auth of [keys.service!, keys.deploy!]) {
      const got = await status(key, routeCase, auth);
      if (isSessionCase(got)) continue;
      const readOnlyList = auth === keys.deploy && !key.startsWith('GET');
      const expected = UNTARGETED_FOR_A_SERVICE_KEY.has(key) && !readOnlyList ? adminStatus : 403;
      expect({ key, got }).toEqual({ key, got: expected });
    }
  });

  it("a key limited to another customer is refused everything of customer A's", async () => {
    const got = await status(key, routeCase, keys.otherCustomer!);
    if (isSessionCase(got)) return;
    expect({ key, got }).toEqual({ key, got: UNTARGETED_FOR_A_CUSTOMER_KEY.has(key) ? 200 : 403 });
  });

  it('a read-only key reads what its owner reads and changes nothing', async () => {
    const got = await status(key, routeCase, keys.readOnly!);
    if (isSessionCase(got)) return;
    const reads = key.startsWith('GET ') && !ADMINISTRATION_READS.has(key) && !OPERATE_READS.has(key);
    expect({ key, got }).toEqual({ key, got: reads ? adminStatus : 403 });
  });
});

describe('HEAD follows GET for limited keys', () => {
  it('refuses a service key the HEAD of another service', async () => {
    const response = await h.app.inject({
      method: 'HEAD',
      url: `/api/services/${f.serviceA}`,
      headers: { authorization: keys.service! },
    });
    expect(response.statusCode).toBe(403);
  });
});

describe('WebSocket upgrades of other services are refused before the handshake', () => {
  let base: string;
  beforeAll(async () => {
    base = await h.listen();
  });

  it.each(Object.entries(SOCKET_TABLE))('%s', async (_key, socketCase) => {
    const url = await socketCase.url(f);
    for (const auth of [keys.service!, keys.deploy!, keys.otherCustomer!]) {
      const ws = openSocket(`ws://${base}${url}`, { authorization: auth });
      await expect(ws.opened).rejects.toThrow(/refused with 403/);
    }
  });

  it("streams its own service's deployment", async () => {
    const deployments = await h.container.db.deployment.findMany({ where: { serviceId: ownService } });
    const ws = openSocket(`ws://${base}/api/deployments/${deployments[0]!.id}`, {
      authorization: keys.deploy!,
    });
    await ws.opened;
    ws.socket.close();
    await ws.closed;
  });
});
