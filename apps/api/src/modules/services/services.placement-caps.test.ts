import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

// Issue 27, class 7: a compose pinned its tasks to the swarm manager (`node.role == manager`) or a
// named node and probed node labels (201 with warnings), and 20 components × 10 replicas = 200
// containers were accepted. Placement is an operator allowlist (SWARM_PLACEMENT_ALLOWED, empty by
// default, the manager never), and every replica counts toward the per-service
// (SERVICE_MAX_CONTAINERS) cap and the per-customer containers quota (docs/quotas.md).
type Problem = { code: string; status: number; detail: string; errors: { path: string; message: string }[] };

const composeWith = (deploy: string, components = 1) =>
  'services:\n' +
  Array.from(
    { length: components },
    (_, index) =>
      `  c${index}:\n    image: local/busybox:1\n    command: ["sleep", "1d"]\n    deploy: ${deploy}\n`,
  ).join('');

function createAs(h: Harness, auth: string, customerId: string, compose: string) {
  return h.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { authorization: auth },
    payload: {
      name: uniqueName('place'),
      customer_id: customerId,
      deploy_method: 'compose',
      compose,
    },
  });
}

describe('with the default settings no tenant placement is accepted', () => {
  let h: Harness;
  let auth: string;
  let customerId: string;
  beforeAll(async () => {
    h = await createHarness();
    customerId = (await h.customer()).id;
    auth = (await h.user('operator', customerId)).auth;
  });
  afterAll(async () => h.close());

  it.each([
    ['the manager by role', '{placement: {constraints: ["node.role == manager"]}}', 'node.role == manager'],
    ['a node by hostname', '{placement: {constraints: ["node.hostname == node-2"]}}', 'node.hostname'],
    ['a node by id', '{placement: {constraints: ["node.id != abc123"]}}', 'node.id'],
    ['a node label probe', '{placement: {constraints: ["node.labels.secret == yes"]}}', 'node.labels.secret'],
    ['a spread preference', '{placement: {preferences: [{spread: node.labels.zone}]}}', 'node.labels.zone'],
  ])('%s → 400 naming the constraint and the setting', async (_, deploy, named) => {
    const response = await createAs(h, auth, customerId, composeWith(deploy));
    expect(response.statusCode).toBe(400);
    const problem = json<Problem>(response);
    expect(problem.code).toBe('invalid_compose');
    expect(problem.errors[0]!.path).toMatch(/^\/body\/compose\/services\/c0\/deploy\/placement\//);
    expect(problem.errors[0]!.message).toContain(named);
    expect(problem.errors[0]!.message).toContain('SWARM_PLACEMENT_ALLOWED');
  });
});

describe('SWARM_PLACEMENT_ALLOWED opens exactly the attributes the operator lists', () => {
  let h: Harness;
  let auth: string;
  let customerId: string;
  beforeAll(async () => {
    h = await createHarness({ SWARM_PLACEMENT_ALLOWED: 'node.labels.zone, node.role' });
    customerId = (await h.customer()).id;
    auth = (await h.user('operator', customerId)).auth;
  });
  afterAll(async () => h.close());

  it('a listed label is accepted in constraints and spread preferences', async () => {
    const deploy =
      '{placement: {constraints: ["node.labels.zone == eu-1"], preferences: [{spread: node.labels.zone}]}}';
    expect((await createAs(h, auth, customerId, composeWith(deploy))).statusCode).toBe(201);
  });

  it('a label not listed is still refused', async () => {
    const response = await createAs(
      h,
      auth,
      customerId,
      composeWith('{placement: {constraints: ["node.labels.zone-secret == x"]}}'),
    );
    expect(response.statusCode).toBe(400);
    expect(json<Problem>(response).errors[0]!.message).toContain(
      'only node.labels.zone, node.role may be used',
    );
  });

  it.each(['node.role == manager', 'node.role != worker', 'node.role==manager'])(
    '%s is refused even with node.role listed: the manager is never a target',
    async (rule) => {
      const response = await createAs(
        h,
        auth,
        customerId,
        composeWith(`{placement: {constraints: ["${rule}"]}}`),
      );
      expect(response.statusCode).toBe(400);
      expect(json<Problem>(response).errors[0]!.message).toContain('never placed on the swarm manager');
    },
  );

  it('node.role == worker is accepted once node.role is listed', async () => {
    const deploy = '{placement: {constraints: ["node.role == worker"]}}';
    expect((await createAs(h, auth, customerId, composeWith(deploy))).statusCode).toBe(201);
  });
});

describe('replicas count toward the per-service cap (SERVICE_MAX_CONTAINERS, default 20)', () => {
  let h: Harness;
  let auth: string;
  let customerId: string;
  beforeAll(async () => {
    h = await createHarness();
    customerId = (await h.customer()).id;
    auth = (await h.user('operator', customerId)).auth;
  });
  afterAll(async () => h.close());

  it('20 components × 10 replicas (200 containers) → 400 naming the limit', async () => {
    const response = await createAs(h, auth, customerId, composeWith('{replicas: 10}', 20));
    expect(response.statusCode).toBe(400);
    const problem = json<Problem>(response);
    expect(problem.errors).toContainEqual({
      path: '/body/compose/services',
      message: expect.stringMatching(
        /would run 200 containers.*at most 20 per service.*SERVICE_MAX_CONTAINERS/,
      ),
    });
  });

  it('2 components × 10 replicas (20, the limit itself) → 201', async () => {
    expect((await createAs(h, auth, customerId, composeWith('{replicas: 10}', 2))).statusCode).toBe(201);
  });
});

describe("replicas count toward the customer's containers quota", () => {
  let h: Harness;
  let auth: string;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h.close());

  /** A customer whose containers quota is 6 (an override, as an unscoped admin sets it). */
  const freshCustomer = async () => {
    const customerId = (await h.customer()).id;
    await h.container.db.customer.update({
      where: { id: customerId },
      data: { quotaOverrides: { containers: 6 } },
    });
    auth = (await h.user('operator', customerId)).auth;
    return customerId;
  };

  it('a create that would pass the total → 409 naming the limit; one that fits → 201', async () => {
    const customerId = await freshCustomer();
    expect((await createAs(h, auth, customerId, composeWith('{replicas: 4}'))).statusCode).toBe(201);
    const over = await createAs(h, auth, customerId, composeWith('{replicas: 3}'));
    expect(over.statusCode).toBe(409);
    expect(json<Problem>(over).detail).toMatch(
      /quota containers exceeded: the customer uses 4 of 6 .* asks for 3 more/,
    );
    expect((await createAs(h, auth, customerId, composeWith('{replicas: 2}'))).statusCode).toBe(201);
  });

  it('deleting a service frees its containers', async () => {
    const customerId = await freshCustomer();
    const first = await createAs(h, auth, customerId, composeWith('{replicas: 6}'));
    expect(first.statusCode).toBe(201);
    expect((await createAs(h, auth, customerId, composeWith('{replicas: 1}'))).statusCode).toBe(409);
    const removed = await h.app.inject({
      method: 'DELETE',
      url: `/api/services/${json<{ id: string }>(first).id}`,
      headers: { authorization: auth },
    });
    expect(removed.statusCode).toBe(204);
    expect((await createAs(h, auth, customerId, composeWith('{replicas: 1}'))).statusCode).toBe(201);
  });

  it('12 parallel creates of 1 container each: exactly 6 are created, the rest get 409', async () => {
    const customerId = await freshCustomer();
    // A client retries a 503 (the pool had no connection in time on a loaded machine), as the
    // API's Retry-After tells it to; the quota must still admit exactly 6 in the end.
    const createRetrying = async () => {
      for (let attempt = 1; ; attempt += 1) {
        const response = await createAs(h, auth, customerId, composeWith('{replicas: 1}'));
        if (response.statusCode !== 503 || attempt === 5) return response;
      }
    };
    const responses = await Promise.all(Array.from({ length: 12 }, createRetrying));
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses).toEqual([...Array(6).fill(201), ...Array(6).fill(409)]);
    const list = await h.app.inject({
      url: `/api/services?customer_id=${customerId}`,
      headers: { authorization: auth },
    });
    expect(json<{ total: number }>(list).total).toBe(6);
  });
});
