import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '@hostctl/auth-policy';
import type { Role } from '@hostctl/domain';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

/**
 * What a customer's own admin (a stranger to us) would try in order to reach beyond its customer
 * or raise its rights, and what lower roles would try. Each refusal is checked to have changed
 * nothing. docs/auth.md#user-administration has the rules.
 */
let h: Harness;
let customerA: string;
let customerB: string;
let root: { id: string; auth: string };
let adminA: { id: string; auth: string };

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
const call = (method: Method, url: string, auth: string, payload?: object) =>
  h.app.inject({ method, url, headers: { authorization: auth }, ...(payload ? { payload } : {}) });
const email = () => `${uniqueName('esc')}@example.test`;
const userRow = (id: string) => h.container.db.user.findUniqueOrThrow({ where: { id } });
async function keyOf(userId: string) {
  const { digest } = generateApiKey();
  return (await h.store.createApiKey({ userId, name: 'victim', digest, expiresAt: null })).id;
}
/** The problem body without the id it names (nor the request id), to compare "someone else's" with "unknown". */
const anonymised = (body: string, id: string) => {
  const { request_id: _requestId, ...rest } = JSON.parse(body.replaceAll(id, '<id>')) as Record<
    string,
    unknown
  >;
  return rest;
};

beforeAll(async () => {
  h = await createHarness();
  [customerA, customerB] = (await Promise.all([h.customer(), h.customer()])).map((c) => c.id) as [
    string,
    string,
  ];
  root = await h.user('admin');
  adminA = await h.user('admin', customerA);
});
afterAll(async () => h?.close());

describe('a customer-scoped admin listing users', () => {
  it('sees only its own customer’s users, on every page, with a total to match', async () => {
    await Promise.all([h.user('viewer', customerA), h.user('viewer', customerB), h.user('operator')]);
    const ids: string[] = [];
    let total = -1;
    for (let page = 1; page < 50; page++) {
      const body = json<{ data: { id: string; customer_id: string | null }[]; total: number }>(
        await call('GET', `/api/users?per_page=1&page=${page}`, adminA.auth),
      );
      total = body.total;
      expect(body.data.every((u) => u.customer_id === customerA)).toBe(true);
      if (body.data.length === 0) break;
      ids.push(...body.data.map((u) => u.id));
    }
    const inA = await h.container.db.user.count({ where: { customerId: customerA } });
    expect(total).toBe(inA);
    expect(ids).toHaveLength(inA);
    expect(ids).toContain(adminA.id);
    expect(ids).not.toContain(root.id);
  });

  it('sees only its own customer in the customer list', async () => {
    const body = json<{ data: { id: string }[]; total: number }>(
      await call('GET', '/api/customers', adminA.auth),
    );
    expect(body).toMatchObject({ total: 1, data: [{ id: customerA }] });
    expect((await call('GET', `/api/customers/${customerB}`, adminA.auth)).statusCode).toBe(404);
  });
});

describe('a customer-scoped admin creating users', () => {
  it.each([
    ['an unscoped admin', 'admin', null],
    ['an unscoped viewer', 'viewer', null],
    ['an admin of its own customer', 'admin', 'A'],
    ['a viewer of another customer', 'viewer', 'B'],
    ['an admin of another customer', 'admin', 'B'],
    ['a viewer of a customer that does not exist', 'viewer', 'missing'],
  ] as const)('cannot create %s (403, nothing created)', async (_label, role, customer) => {
    const customerId =
      customer === 'A'
        ? customerA
        : customer === 'B'
          ? customerB
          : customer === 'missing'
            ? randomUUID()
            : null;
    const address = email();
    const response = await call('POST', '/api/users', adminA.auth, {
      email: address,
      name: 'Escalation',
      role,
      customer_id: customerId,
    });
    expect(response.statusCode).toBe(403);
    expect(json(response)).toMatchObject({ code: 'forbidden' });
    expect(await h.store.findUserByEmail(address)).toBeNull();
  });

  it.each(['operator', 'viewer'] as const)(
    'creates a %s of its own customer, by default too',
    async (role) => {
      for (const payload of [{ customer_id: customerA }, {}]) {
        const created = await call('POST', '/api/users', adminA.auth, {
          email: email(),
          name: 'Ok',
          role,
          ...payload,
        });
        expect(created.statusCode).toBe(201);
        expect(json(created)).toMatchObject({ role, customer_id: customerA });
      }
    },
  );
});

describe('a customer-scoped admin changing other users', () => {
  it('gets the same 404 for another customer’s user, an unscoped user and an unknown id', async () => {
    const unknown = randomUUID();
    const notFound = anonymised(
      (await call('PATCH', `/api/users/${unknown}`, adminA.auth, { name: 'x' })).body,
      unknown,
    );
    const victims = [await h.user('viewer', customerB), await h.user('viewer'), root];
    for (const victim of victims) {
      const before = await userRow(victim.id);
      for (const payload of [
        { name: 'Owned' },
        { role: 'admin' },
        { customer_id: customerA },
        { customer_id: null },
      ]) {
        const response = await call('PATCH', `/api/users/${victim.id}`, adminA.auth, payload);
        expect(response.statusCode).toBe(404);
        expect(anonymised(response.body, victim.id)).toEqual(notFound);
      }
      expect(await userRow(victim.id)).toEqual(before);
    }
  });

  it('cannot move a user of its customer to another customer or make it unscoped', async () => {
    const viewer = await h.user('viewer', customerA);
    for (const customer_id of [null, customerB, randomUUID()]) {
      expect((await call('PATCH', `/api/users/${viewer.id}`, adminA.auth, { customer_id })).statusCode).toBe(
        403,
      );
    }
    expect((await userRow(viewer.id)).customerId).toBe(customerA);
  });

  it('cannot grant admin, nor touch another admin of its customer', async () => {
    const viewer = await h.user('viewer', customerA);
    expect((await call('PATCH', `/api/users/${viewer.id}`, adminA.auth, { role: 'admin' })).statusCode).toBe(
      403,
    );
    expect((await userRow(viewer.id)).role).toBe('viewer');
    const peer = await h.user('admin', customerA);
    for (const payload of [{ role: 'viewer' }, { name: 'Renamed' }]) {
      expect((await call('PATCH', `/api/users/${peer.id}`, adminA.auth, payload)).statusCode).toBe(403);
    }
    expect(await userRow(peer.id)).toMatchObject({ role: 'admin', name: 'Test admin' });
  });

  it('cannot raise a role, even below admin; the refused change leaves the user as it was', async () => {
    const viewer = await h.user('viewer', customerA);
    const refused = await call('PATCH', `/api/users/${viewer.id}`, adminA.auth, {
      role: 'operator',
      name: 'Op',
    });
    expect(refused.statusCode).toBe(403);
    expect(json(refused).detail).toMatch(/only an unscoped admin raises/);
    expect(await userRow(viewer.id)).toMatchObject({ role: 'viewer', name: 'Test viewer' });
  });

  it('may rename and demote operators and viewers of its customer', async () => {
    const operator = await h.user('operator', customerA);
    const renamed = await call('PATCH', `/api/users/${operator.id}`, adminA.auth, { name: 'Op' });
    expect(json(renamed)).toMatchObject({ role: 'operator', name: 'Op', customer_id: customerA });
    const demoted = await call('PATCH', `/api/users/${operator.id}`, adminA.auth, {
      role: 'viewer',
      customer_id: customerA,
    });
    expect(json(demoted)).toMatchObject({ role: 'viewer', customer_id: customerA });
  });
});

describe('nobody raises their own privileges', () => {
  it('a scoped admin cannot clear its own customer, and still sees only its customer afterwards', async () => {
    const self = await h.user('admin', customerA);
    const service = await h.createService(root.auth, { customer_id: customerB });
    for (const customer_id of [null, customerB]) {
      const response = await call('PATCH', `/api/users/${self.id}`, self.auth, { customer_id });
      expect(response.statusCode).toBe(403);
      expect(json(response).detail).toMatch(/your own role or customer/);
    }
    expect((await userRow(self.id)).customerId).toBe(customerA);
    expect((await call('GET', `/api/services/${service.id}`, self.auth)).statusCode).toBe(404);
    const list = json<{ data: { customer_id: string }[] }>(
      await call('GET', '/api/services?per_page=100', self.auth),
    );
    expect(list.data.every((s) => s.customer_id === customerA)).toBe(true);
  });

  it.each([
    ['unscoped admin demoting itself', 'admin', null, { role: 'viewer' }],
    ['unscoped admin scoping itself', 'admin', 'A', { customer_id: 'A' }],
    ['scoped admin demoting itself', 'admin', 'A', { role: 'operator' }],
  ] as const)('%s → 403 with a clear detail', async (_label, role, scope, change) => {
    const self = await h.user(role, scope === 'A' && _label.startsWith('scoped') ? customerA : null);
    const payload = 'customer_id' in change ? { customer_id: customerA } : change;
    const before = await userRow(self.id);
    const response = await call('PATCH', `/api/users/${self.id}`, self.auth, payload);
    expect(response.statusCode).toBe(403);
    expect(json(response).detail).toMatch(/your own role or customer/);
    expect(await userRow(self.id)).toEqual(before);
  });

  it.each(['viewer', 'operator'] as const)(
    'a %s cannot make itself admin or unscoped, scoped or not',
    async (role) => {
      for (const scope of [null, customerA]) {
        const self = await h.user(role, scope);
        for (const payload of [{ role: 'admin' }, { customer_id: null }, { customer_id: customerB }]) {
          expect((await call('PATCH', `/api/users/${self.id}`, self.auth, payload)).statusCode).toBe(403);
        }
        expect(await userRow(self.id)).toMatchObject({ role, customerId: scope });
      }
    },
  );

  it('an admin may repeat its own role and customer (a no-op) and rename itself', async () => {
    const response = await call('PATCH', `/api/users/${adminA.id}`, adminA.auth, {
      role: 'admin',
      customer_id: customerA,
      name: 'Scoped admin',
    });
    expect(json(response)).toMatchObject({ role: 'admin', customer_id: customerA, name: 'Scoped admin' });
  });
});

describe('operators and viewers do not manage users', () => {
  it.each([
    ['operator', null],
    ['operator', 'A'],
    ['viewer', null],
    ['viewer', 'A'],
  ] as const)('%s (%s): list, create (even an admin) and change are 403', async (role: Role, scope) => {
    const caller = await h.user(role, scope === 'A' ? customerA : null);
    const target = await h.user('viewer', customerA);
    expect((await call('GET', '/api/users', caller.auth)).statusCode).toBe(403);
    for (const newRole of ['admin', 'viewer'] as const) {
      const address = email();
      const created = await call('POST', '/api/users', caller.auth, {
        email: address,
        name: 'X',
        role: newRole,
      });
      expect(created.statusCode).toBe(403);
      expect(await h.store.findUserByEmail(address)).toBeNull();
    }
    expect((await call('PATCH', `/api/users/${target.id}`, caller.auth, { role: 'admin' })).statusCode).toBe(
      403,
    );
    expect((await userRow(target.id)).role).toBe('viewer');
  });
});

describe('API keys of other users', () => {
  it('a scoped admin revokes keys of its operators and viewers only; others are 404 like unknown ones', async () => {
    const unknown = randomUUID();
    const notFound = anonymised(
      (await call('DELETE', `/api/auth/api-keys/${unknown}`, adminA.auth)).body,
      unknown,
    );
    const victims = [
      await h.user('viewer', customerB),
      await h.user('admin', customerB),
      await h.user('operator'),
      root,
      await h.user('admin', customerA),
    ];
    for (const victim of victims) {
      const keyId = await keyOf(victim.id);
      const response = await call('DELETE', `/api/auth/api-keys/${keyId}`, adminA.auth);
      expect(response.statusCode).toBe(404);
      expect(anonymised(response.body, keyId)).toEqual(notFound);
      expect((await call('GET', '/api/auth/me', victim.auth)).statusCode).toBe(200);
    }
    const managed = await h.user('operator', customerA);
    const managedKey = await keyOf(managed.id);
    expect((await call('DELETE', `/api/auth/api-keys/${managedKey}`, adminA.auth)).statusCode).toBe(204);
  });

  it('operators and viewers revoke only their own keys', async () => {
    for (const role of ['operator', 'viewer'] as const) {
      const caller = await h.user(role, customerA);
      const neighbour = await h.user('viewer', customerA);
      expect(
        (await call('DELETE', `/api/auth/api-keys/${await keyOf(neighbour.id)}`, caller.auth)).statusCode,
      ).toBe(404);
      expect(
        (await call('DELETE', `/api/auth/api-keys/${await keyOf(caller.id)}`, caller.auth)).statusCode,
      ).toBe(204);
    }
  });
});

describe('changes apply on the very next request', () => {
  it('moving a user to another customer changes what its key sees at once', async () => {
    const moved = await h.user('operator', customerA);
    const inA = await h.createService(root.auth, { customer_id: customerA });
    expect((await call('GET', `/api/services/${inA.id}`, moved.auth)).statusCode).toBe(200);
    expect(
      (await call('PATCH', `/api/users/${moved.id}`, root.auth, { customer_id: customerB })).statusCode,
    ).toBe(200);
    expect((await call('GET', `/api/services/${inA.id}`, moved.auth)).statusCode).toBe(404);
  });

  it('a demoted scoped admin loses user management at once', async () => {
    const demoted = await h.user('admin', customerA);
    expect((await call('GET', '/api/users', demoted.auth)).statusCode).toBe(200);
    expect((await call('PATCH', `/api/users/${demoted.id}`, root.auth, { role: 'viewer' })).statusCode).toBe(
      200,
    );
    expect((await call('GET', '/api/users', demoted.auth)).statusCode).toBe(403);
  });
});

describe('unscoped admins', () => {
  it('create unscoped admins, scope and unscope users, and grant any role', async () => {
    const created = await call('POST', '/api/users', root.auth, {
      email: email(),
      name: 'Root 2',
      role: 'admin',
    });
    expect(json(created)).toMatchObject({ role: 'admin', customer_id: null });
    const id = json<{ id: string }>(created).id;
    expect(
      json(await call('PATCH', `/api/users/${id}`, root.auth, { customer_id: customerA })),
    ).toMatchObject({
      customer_id: customerA,
    });
    expect(
      json(await call('PATCH', `/api/users/${id}`, root.auth, { customer_id: null, role: 'operator' })),
    ).toMatchObject({ customer_id: null, role: 'operator' });
  });
});
