import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '@hostctl/domain';
import { COMPOSE_BUSYBOX, json, uniqueName } from '../test-support/harness.js';
import { openSocket } from '../test-support/ws-client.js';
import {
  createAuthHarness,
  provision,
  seedKey,
  TEST_CALLBACK,
  TEST_ORIGIN,
  testAccount,
  uniqueCustomer,
  type AuthHarness,
} from '../modules/auth/test-support/auth-harness.js';
import { startDevIdpProcess, type DevIdpProcess } from '../modules/auth/test-support/dev-idp-process.js';
import { signIn } from '../modules/auth/test-support/oidc-login.js';

/**
 * Every long-lived stream re-checks its credential: revoking the key, logging out, a role change
 * and a customer change each close both the deployment and the log WebSocket within the
 * configured bound, through the real HTTP server, Redis and PostgreSQL.
 */
const RECHECK_MS = 200;
/** The bound the test holds the server to: a few intervals plus scheduling slack. */
const BOUND_MS = RECHECK_MS * 3 + 700;

let idp: DevIdpProcess;
let h: AuthHarness;
let host: string;
let admin: { auth: string };
const streamer = testAccount('streamer');
let streamerCustomer: string;

beforeAll(async () => {
  idp = await startDevIdpProcess({
    accounts: [streamer],
    redirectUris: [TEST_CALLBACK],
    postLogoutRedirectUris: [],
  });
  h = await createAuthHarness({ OIDC_ISSUER: idp.issuer, STREAM_RECHECK_MS: String(RECHECK_MS) });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  host = `127.0.0.1:${(h.app.server.address() as { port: number }).port}`;
  const root = await h.store.createUser({
    email: `${uniqueName('root')}@example.test`,
    name: 'root',
    role: 'admin',
    customerId: null,
  });
  admin = await seedKey(h.store, root.id);
  streamerCustomer = (await uniqueCustomer(h.store)).id;
  await provision(h.store, streamer, 'viewer', streamerCustomer);
}, 60_000);
afterAll(async () => {
  await h?.close();
  await idp?.stop();
});

/** A service of a fresh customer; its first deployment stays queued (no worker on this prefix). */
async function serviceOfNewCustomer(customerId?: string) {
  const customer = customerId ? { id: customerId } : await uniqueCustomer(h.store);
  const response = await h.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { authorization: admin.auth },
    payload: {
      name: uniqueName('svc'),
      customer_id: customer.id,
      deploy_method: 'compose',
      compose: COMPOSE_BUSYBOX,
    },
  });
  expect(response.statusCode).toBe(201);
  const body = json<{ id: string; deploy_job_id: string }>(response);
  return { customerId: customer.id, serviceId: body.id, deploymentId: body.deploy_job_id };
}

const STREAMS = {
  deployment: (s: { deploymentId: string }) => `/api/deployments/${s.deploymentId}`,
  logs: (s: { serviceId: string }) => `/api/services/${s.serviceId}/logs?follow=true`,
} as const;

async function userWithKey(role: Role, customerId: string | null) {
  const user = await h.store.createUser({
    email: `${uniqueName(role)}@example.test`,
    name: role,
    role,
    customerId,
  });
  const key = await seedKey(h.store, user.id);
  return { userId: user.id, keyId: key.id, auth: key.auth };
}

/** Opens the stream, checks it stays open across several re-checks, fires the trigger, times the close. */
async function closesAfter(path: string, headers: Record<string, string>, trigger: () => Promise<void>) {
  const client = openSocket(`ws://${host}${path}`, headers);
  await client.opened;
  await new Promise((resolve) => setTimeout(resolve, RECHECK_MS * 4));
  expect(client.closeCode).toBeUndefined();
  const start = Date.now();
  await trigger();
  await Promise.race([client.closed, new Promise((resolve) => setTimeout(resolve, BOUND_MS * 3))]);
  const elapsed = Date.now() - start;
  client.socket.terminate();
  return { elapsed, closeCode: client.closeCode, messages: client.messages };
}

describe.each(Object.entries(STREAMS))('%s WebSocket re-checks its credential', (_kind, pathOf) => {
  it('closes 4401 once its API key is revoked (through DELETE /api/auth/api-keys/:id)', async () => {
    const target = await serviceOfNewCustomer();
    const user = await userWithKey('viewer', target.customerId);
    const result = await closesAfter(pathOf(target), { authorization: user.auth }, async () => {
      const revoked = await h.app.inject({
        method: 'DELETE',
        url: `/api/auth/api-keys/${user.keyId}`,
        headers: { authorization: user.auth },
      });
      expect(revoked.statusCode).toBeLessThan(300);
    });
    expect(result.closeCode).toBe(4401);
    expect(result.elapsed).toBeLessThan(BOUND_MS);
    expect(result.messages.at(-1)).toMatchObject({ type: 'error', code: 'unauthenticated' });
  });

  it('closes 4404 when an unscoped admin is demoted to viewer (role change empties the scope)', async () => {
    const target = await serviceOfNewCustomer();
    const user = await userWithKey('admin', null);
    const result = await closesAfter(pathOf(target), { authorization: user.auth }, async () => {
      const changed = await h.app.inject({
        method: 'PATCH',
        url: `/api/users/${user.userId}`,
        headers: { authorization: admin.auth },
        payload: { role: 'viewer' },
      });
      expect(changed.statusCode).toBe(200);
    });
    expect(result.closeCode).toBe(4404);
    expect(result.elapsed).toBeLessThan(BOUND_MS);
  });

  it("closes 4404 when the user's customer_id moves the service out of scope", async () => {
    const target = await serviceOfNewCustomer();
    const other = await uniqueCustomer(h.store);
    const user = await userWithKey('operator', target.customerId);
    const result = await closesAfter(pathOf(target), { authorization: user.auth }, async () => {
      const changed = await h.app.inject({
        method: 'PATCH',
        url: `/api/users/${user.userId}`,
        headers: { authorization: admin.auth },
        payload: { customer_id: other.id },
      });
      expect(changed.statusCode).toBe(200);
    });
    expect(result.closeCode).toBe(4404);
    expect(result.elapsed).toBeLessThan(BOUND_MS);
  });

  it('closes 4401 once the browser session that opened it logs out', async () => {
    const target = await serviceOfNewCustomer(streamerCustomer);
    const { session } = await signIn(h.app, streamer);
    const headers = { cookie: session, origin: TEST_ORIGIN };
    const result = await closesAfter(pathOf(target), headers, async () => {
      const out = await h.app.inject({ method: 'POST', url: '/api/auth/logout', headers });
      expect(out.statusCode).toBe(200);
    });
    expect(result.closeCode).toBe(4401);
    expect(result.elapsed).toBeLessThan(BOUND_MS);
  });
});
