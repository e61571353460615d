import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

let h: Harness;
let admin: { id: string; auth: string };
let operator: { auth: string };
let viewer: { auth: string };
let scopedOperator: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  admin = await h.user('admin');
  operator = await h.user('operator');
  viewer = await h.user('viewer', customerId);
  scopedOperator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

const call = (method: 'GET' | 'POST' | 'PATCH', url: string, auth: string, payload?: object) =>
  h.app.inject({ method, url, headers: { authorization: auth }, ...(payload ? { payload } : {}) });

describe('customers', () => {
  it('operators create customers; names are unique', async () => {
    const name = uniqueName('shop');
    const created = await call('POST', '/api/customers', operator.auth, { name });
    expect(created.statusCode).toBe(201);
    expect(json(created)).toMatchObject({ id: expect.any(String), name, created_at: expect.any(String) });
    expect((await call('POST', '/api/customers', operator.auth, { name })).statusCode).toBe(409);
  });

  it('viewers and customer-scoped users cannot create customers', async () => {
    expect((await call('POST', '/api/customers', viewer.auth, { name: uniqueName('x') })).statusCode).toBe(
      403,
    );
    expect(
      (await call('POST', '/api/customers', scopedOperator.auth, { name: uniqueName('x') })).statusCode,
    ).toBe(403);
  });

  it('a scoped user sees only its own customer', async () => {
    const list = json<{ data: { id: string }[]; total: number }>(
      await call('GET', '/api/customers', viewer.auth),
    );
    expect(list.data.map((c) => c.id)).toEqual([customerId]);
    const other = (await h.customer()).id;
    expect((await call('GET', `/api/customers/${other}`, viewer.auth)).statusCode).toBe(404);
    expect((await call('GET', `/api/customers/${customerId}`, viewer.auth)).statusCode).toBe(200);
  });

  it.each([{}, { name: '' }, { name: ' padded ' }, { name: 'x', extra: 1 }])(
    'bad body %j → 400',
    async (body) => {
      expect((await call('POST', '/api/customers', operator.auth, body)).statusCode).toBe(400);
    },
  );
});

describe('users', () => {
  it('only admins manage users', async () => {
    for (const caller of [operator, viewer, scopedOperator]) {
      expect((await call('GET', '/api/users', caller.auth)).statusCode).toBe(403);
      expect(
        (await call('POST', '/api/users', caller.auth, { email: 'a@b.test', name: 'A', role: 'viewer' }))
          .statusCode,
      ).toBe(403);
    }
  });

  it('creates a user with the spec profile shape; duplicate email → 409; unknown customer → 400', async () => {
    const email = `${uniqueName('u')}@example.test`;
    const created = await call('POST', '/api/users', admin.auth, {
      email,
      name: 'New',
      role: 'viewer',
      customer_id: customerId,
    });
    expect(created.statusCode).toBe(201);
    expect(json(created)).toEqual({
      id: expect.any(String),
      email,
      name: 'New',
      role: 'viewer',
      customer_id: customerId,
      created_at: expect.any(String),
    });
    expect(
      (await call('POST', '/api/users', admin.auth, { email, name: 'Again', role: 'viewer' })).statusCode,
    ).toBe(409);
    const bad = await call('POST', '/api/users', admin.auth, {
      email: `${uniqueName('v')}@x.test`,
      name: 'V',
      role: 'viewer',
      customer_id: 'nope',
    });
    expect(bad.statusCode).toBe(400);
  });

  it('a role downgrade applies to the user’s API key on the very next request', async () => {
    const target = await h.user('operator');
    const create = () =>
      call('POST', '/api/services', target.auth, {
        name: uniqueName('dg'),
        customer_id: customerId,
        deploy_method: 'template',
        template_id: 'busybox-web',
      });
    expect((await create()).statusCode).toBe(201);
    const patched = await call('PATCH', `/api/users/${target.id}`, admin.auth, { role: 'viewer' });
    expect(json(patched)).toMatchObject({ role: 'viewer' });
    expect((await create()).statusCode).toBe(403);
  });

  it('an admin cannot remove its own admin role (403: nobody changes their own role)', async () => {
    expect((await call('PATCH', `/api/users/${admin.id}`, admin.auth, { role: 'viewer' })).statusCode).toBe(
      403,
    );
  });
});
