import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

/**
 * Passwords the template catalog generates are secret variables (docs/secrets.md#secret-variables):
 * the create's answer, the detail, the list and a PATCH's answer name them and never carry the
 * value; the audited reveal reads it. A value the caller gives keeps the kind it was given under.
 */
let h: Harness;
let admin: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness();
  admin = await h.user('admin');
  customerId = (await h.customer()).id;
});
afterAll(async () => h?.close());

const request = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  h.app.inject({ method, url, headers: { authorization: admin.auth }, ...(payload ? { payload } : {}) });

async function createPostgres(extra: object = {}) {
  const name = uniqueName('pg');
  const created = await request('POST', '/api/services', {
    name,
    customer_id: customerId,
    deploy_method: 'template',
    template_id: 'postgres',
    ...extra,
  });
  expect(created.statusCode).toBe(201);
  const { id } = json<{ id: string }>(created);
  const stored = await h.container.db.service.findUniqueOrThrow({ where: { id } });
  return { id, name, created, stored: stored.variables as Record<string, string> };
}

const revealed = async (id: string, name: string) =>
  json<{ value: string }>(await request('POST', `/api/services/${id}/secret-variables/reveal`, { name }))
    .value;

describe('a generated template password', () => {
  it('is a secret: named by create, detail, list and PATCH answers, its value in none; reveal reads it', async () => {
    const { id, name, created, stored } = await createPostgres();
    const password = stored.POSTGRES_PASSWORD ?? '';
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);

    const detail = await request('GET', `/api/services/${id}`);
    const body = json<{ variables: Record<string, string>; secret_variables: Record<string, object> }>(
      detail,
    );
    expect(body.variables).toEqual({ POSTGRES_USER: 'app', POSTGRES_DB: 'app' });
    expect(body.secret_variables.POSTGRES_PASSWORD).toMatchObject({ set: true });
    const list = await request('GET', `/api/services?search=${name}`);
    const patched = await request('PATCH', `/api/services/${id}`, { variables: { POSTGRES_DB: 'shop' } });
    expect(patched.statusCode).toBe(200);
    for (const answer of [created, detail, list, patched]) expect(answer.body).not.toContain(password);

    expect(await revealed(id, 'POSTGRES_PASSWORD')).toBe(password);
    // A secret stays one: a plain write of the name is refused, as for any secret.
    const plainWrite = await request('PATCH', `/api/services/${id}`, {
      variables: { POSTGRES_PASSWORD: 'x'.repeat(16) },
    });
    expect(plainWrite.statusCode).toBe(422);
  });

  it('generated again when removed is a secret again, with a new value', async () => {
    const { id, stored } = await createPostgres();
    const removed = await request('PATCH', `/api/services/${id}`, {
      secret_variables: { POSTGRES_PASSWORD: null },
    });
    expect(removed.statusCode).toBe(200);
    expect(json<{ secret_variables: object }>(removed).secret_variables).toHaveProperty('POSTGRES_PASSWORD');
    const again = await revealed(id, 'POSTGRES_PASSWORD');
    expect(again).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(again).not.toBe(stored.POSTGRES_PASSWORD);
    expect(removed.body).not.toContain(again);
  });

  it('given by the caller keeps the kind it was given under', async () => {
    const plain = await createPostgres({ variables: { POSTGRES_PASSWORD: 'caller-chose-this-1' } });
    const plainDetail = json<{ variables: object; secret_variables: object }>(
      await request('GET', `/api/services/${plain.id}`),
    );
    expect(plainDetail.variables).toHaveProperty('POSTGRES_PASSWORD', 'caller-chose-this-1');
    expect(plainDetail.secret_variables).toEqual({});

    const secret = await createPostgres({ secret_variables: { POSTGRES_PASSWORD: 'caller-secret-value-2' } });
    expect(await revealed(secret.id, 'POSTGRES_PASSWORD')).toBe('caller-secret-value-2');
  });
});
