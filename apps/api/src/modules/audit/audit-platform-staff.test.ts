import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * Issue 27, class 9: a customer admin's audit log showed platform staff's user ids, key ids and
 * source addresses. For a customer-scoped reader, an actor who is not a user of that customer is
 * "platform staff"; the customer's own people, and an unscoped admin's view, are unchanged.
 */
let h: Harness;
let customerA: string;
let serviceA: string;
let root: { id: string; auth: string };
let adminA: { id: string; auth: string };
let operatorA: { id: string; auth: string };

interface Item {
  request_id: string;
  actor: { type: string; user_id: string | null; api_key_id: string | null };
  source_address: string;
}

beforeAll(async () => {
  h = await createHarness({ LIFECYCLE_WAIT_MS: '100' });
  customerA = (await h.customer()).id;
  [root, adminA, operatorA] = await Promise.all([
    h.user('admin', null),
    h.user('admin', customerA),
    h.user('operator', customerA),
  ]);
  serviceA = (await h.createService(root.auth, { customer_id: customerA })).id;
});
afterAll(async () => h?.close());

async function redeployAs(auth: string): Promise<string> {
  const response = await h.app.inject({
    method: 'POST',
    url: `/api/services/${serviceA}/redeploy`,
    headers: { authorization: auth },
  });
  expect(response.statusCode).toBe(200);
  return String(response.headers['x-request-id']);
}
async function eventsSeenBy(auth: string): Promise<Item[]> {
  await h.container.audit.flush();
  const response = await h.app.inject({
    method: 'GET',
    url: `/api/audit-events?target_id=${serviceA}&per_page=100`,
    headers: { authorization: auth },
  });
  expect(response.statusCode).toBe(200);
  return json<{ data: Item[] }>(response).data;
}

describe("a customer admin's audit log", () => {
  it('shows platform staff as "platform staff": no user id, key id or source address', async () => {
    const byStaff = await redeployAs(root.auth);
    const seen = (await eventsSeenBy(adminA.auth)).find((item) => item.request_id === byStaff);
    expect(seen).toMatchObject({
      actor: { type: 'api_key', user_id: null, api_key_id: null },
      source_address: 'platform staff',
    });
    expect(JSON.stringify(await eventsSeenBy(adminA.auth))).not.toContain(root.id);
  });

  it("shows the customer's own people as they are; the platform's admin sees everyone", async () => {
    const byOwn = await redeployAs(operatorA.auth);
    const byStaff = await redeployAs(root.auth);
    const own = (await eventsSeenBy(adminA.auth)).find((item) => item.request_id === byOwn);
    expect(own?.actor.user_id).toBe(operatorA.id);
    expect(own?.actor.api_key_id).not.toBeNull();
    expect(own?.source_address).not.toBe('platform staff');
    const unscoped = (await eventsSeenBy(root.auth)).find((item) => item.request_id === byStaff);
    expect(unscoped?.actor.user_id).toBe(root.id);
    expect(unscoped?.source_address).not.toBe('platform staff');
  });
});
