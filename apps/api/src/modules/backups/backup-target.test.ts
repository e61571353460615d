import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

// A customer's own backup bucket (docs/backups.md#a-customers-own-target): who may set, read and
// remove it, what is refused, and that the credentials are sealed at rest and never answered.
let h: Harness;
let customerId: string;
let operator: { auth: string };

const SECRET = `secret-${Math.random().toString(36).slice(2)}-key`;
const KEY_ID = `AKID${Math.random().toString(36).slice(2, 10).toUpperCase()}`;
const TARGET = {
  endpoint: 'https://s3.eu-central-1.example.com',
  bucket: 'acme-backups',
  prefix: '/nightly/',
  region: 'eu-central-1',
  access_key_id: KEY_ID,
  secret_access_key: SECRET,
};

beforeAll(async () => {
  h = await createHarness({ BACKUP_TARGET_ALLOWED_HOSTS: '127.0.0.1:9000' });
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

const request = (method: 'GET' | 'PUT' | 'DELETE', payload?: object, auth = operator.auth, id = customerId) =>
  h.app.inject({
    method,
    url: `/api/customers/${id}/backup-target`,
    headers: { authorization: auth },
    ...(payload ? { payload } : {}),
  });
/** The column as PostgreSQL holds it (text: the client's vault opens envelopes in results). */
const rawCredentials = async (id = customerId) =>
  (
    await h.container.db.$queryRaw<{ raw: string }[]>`
      SELECT credentials::text AS raw FROM customer_backup_targets WHERE customer_id = ${id}`
  )[0]?.raw;

describe('PUT /api/customers/:id/backup-target', () => {
  it('stores the target with its credentials sealed and answers without them', async () => {
    const response = await request('PUT', TARGET);
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toMatchObject({
      customer_id: customerId,
      endpoint: 'https://s3.eu-central-1.example.com:443',
      bucket: 'acme-backups',
      prefix: 'nightly',
      region: 'eu-central-1',
      has_credentials: true,
      has_ca_certificate: false,
    });
    expect(response.body).not.toContain(SECRET);
    expect(response.body).not.toContain(KEY_ID);
    const raw = await rawCredentials();
    expect(raw).toContain('"$enc"');
    expect(raw).not.toContain(SECRET);
    expect(raw).not.toContain(KEY_ID);

    const read = await request('GET');
    expect(read.statusCode).toBe(200);
    expect(json(read)).toEqual(json(response));
    expect(read.body).not.toContain(SECRET);
  });

  it('replaces it whole: a new secret, the defaults for what is left out, a CA', async () => {
    const ca = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    const { prefix: _prefix, region: _region, ...rest } = TARGET;
    const response = await request('PUT', {
      ...rest,
      secret_access_key: 'rotated-secret',
      ca_certificate: ca,
    });
    expect(json(response)).toMatchObject({
      prefix: 'hostctl',
      region: 'us-east-1',
      has_ca_certificate: true,
    });
    expect(await rawCredentials()).not.toContain('rotated-secret');
  });

  it.each([
    ['a path', { endpoint: 'https://s3.example.com/bucket' }, '/body/endpoint'],
    ['credentials in the URL', { endpoint: 'https://user:pw@s3.example.com' }, '/body/endpoint'],
    ['plain http to a public host', { endpoint: 'http://s3.example.com' }, '/body/endpoint'],
    ['loopback', { endpoint: 'https://127.0.0.1:9001' }, '/body/endpoint'],
    ['the cloud metadata address', { endpoint: 'https://169.254.169.254' }, '/body/endpoint'],
    ['a private address', { endpoint: 'https://10.0.0.5' }, '/body/endpoint'],
    ['a single-label host', { endpoint: 'https://minio' }, '/body/endpoint'],
    ['an IPv6 literal', { endpoint: 'https://[2001:db8::1]' }, '/body/endpoint'],
    ['an upper-case bucket', { bucket: 'Backups' }, '/body/bucket'],
    ['a prefix with a space', { prefix: 'a b' }, '/body/prefix'],
    ['a region with a slash', { region: 'eu/1' }, '/body/region'],
    ['a CA that is not PEM', { ca_certificate: 'not a certificate' }, '/body/ca_certificate'],
    ['no secret key', { secret_access_key: undefined }, 'secret_access_key'],
    ['an unknown field', { password: 'x' }, 'password'],
  ])('refuses %s with a problem naming the field, and stores nothing', async (_label, change, field) => {
    const fresh = (await h.customer()).id;
    const response = await request('PUT', { ...TARGET, ...change }, (await h.user('admin')).auth, fresh);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    const problem = json<{ detail: string; errors?: { path: string }[] }>(response);
    expect(`${problem.detail} ${JSON.stringify(problem.errors ?? [])}`).toContain(field);
    expect(response.body).not.toContain(SECRET);
    expect(await rawCredentials(fresh)).toBeUndefined();
  });

  it('admits a loopback endpoint over http only when BACKUP_TARGET_ALLOWED_HOSTS lists it', async () => {
    const fresh = (await h.customer()).id;
    const admin = (await h.user('admin')).auth;
    const allowed = await request('PUT', { ...TARGET, endpoint: 'http://127.0.0.1:9000' }, admin, fresh);
    expect(allowed.statusCode, allowed.body).toBe(200);
    expect(json(allowed)).toMatchObject({ endpoint: 'http://127.0.0.1:9000' });
  });
});

describe('PUT without the secret', () => {
  // The dashboard cannot show the secret back: a user who edits the prefix sends none.
  const stored = async (id: string) => {
    const row = await h.container.db.customerBackupTarget.findUnique({ where: { customerId: id } });
    return row && { ...row, credentials: row.credentials as Record<string, string> };
  };
  const withoutSecret = (change: object = {}) => {
    const { secret_access_key: _secret, access_key_id: _keyId, ...rest } = TARGET;
    return { ...rest, ...change };
  };
  let fresh: string;
  let admin: string;
  beforeAll(async () => {
    fresh = (await h.customer()).id;
    admin = (await h.user('admin')).auth;
  });

  it('keeps the stored credentials while the endpoint and bucket stay (its port written or not)', async () => {
    expect((await request('PUT', TARGET, admin, fresh)).statusCode).toBe(200);
    const edited = await request(
      'PUT',
      withoutSecret({ prefix: 'weekly', endpoint: 'https://s3.eu-central-1.example.com:443' }),
      admin,
      fresh,
    );
    expect(edited.statusCode, edited.body).toBe(200);
    expect(json(edited)).toMatchObject({ prefix: 'weekly', has_credentials: true });
    expect((await stored(fresh))?.credentials).toEqual({ access_key_id: KEY_ID, secret_access_key: SECRET });

    // The same key id given again is the same credentials.
    const again = await request(
      'PUT',
      withoutSecret({ access_key_id: KEY_ID, region: 'eu-west-1' }),
      admin,
      fresh,
    );
    expect(again.statusCode, again.body).toBe(200);
    expect((await stored(fresh))?.credentials).toEqual({ access_key_id: KEY_ID, secret_access_key: SECRET });
    expect(await rawCredentials(fresh)).not.toContain(SECRET);
  });

  it.each([
    ['another endpoint', { endpoint: 'https://s3.attacker.example.net' }, '/body/secret_access_key'],
    [
      'another port of the endpoint',
      { endpoint: 'https://s3.eu-central-1.example.com:8443' },
      '/body/secret_access_key',
    ],
    ['another bucket', { bucket: 'acme-elsewhere' }, '/body/secret_access_key'],
    ['a new access key id', { access_key_id: 'AKIDOTHER' }, '/body/secret_access_key'],
  ])(
    'refuses %s without a secret, naming the missing field, and keeps the target',
    async (_label, change, field) => {
      expect((await request('PUT', TARGET, admin, fresh)).statusCode).toBe(200);
      const before = await stored(fresh);
      const response = await request('PUT', withoutSecret(change), admin, fresh);
      expect(response.statusCode, response.body).toBe(400);
      const problem = json<{ detail: string; errors?: { path: string }[] }>(response);
      expect(problem.errors?.map((error) => error.path)).toEqual([field]);
      expect(response.body).not.toContain(SECRET);
      const after = await stored(fresh);
      expect(after).toEqual(before);
    },
  );

  it('refuses a secret without its key id', async () => {
    const { access_key_id: _keyId, ...rest } = TARGET;
    const response = await request('PUT', rest, admin, fresh);
    expect(response.statusCode).toBe(400);
    expect(json<{ errors?: { path: string }[] }>(response).errors?.map((error) => error.path)).toEqual([
      '/body/access_key_id',
    ]);
  });

  it("never takes another customer's stored secret", async () => {
    // A customer without credentials of its own, pointing at the same place as one that has them.
    const other = (await h.customer()).id;
    const response = await request('PUT', withoutSecret(), admin, other);
    expect(response.statusCode).toBe(400);
    expect(json<{ detail: string }>(response).detail).toMatch(/no credentials are stored/);
    expect(await stored(other)).toBeNull();
  });
});

describe('who may', () => {
  it("refuses viewers, even the customer's own, to read or change it", async () => {
    await request('PUT', TARGET);
    const viewer = (await h.user('viewer', customerId)).auth;
    for (const method of ['GET', 'PUT', 'DELETE'] as const)
      expect((await request(method, method === 'PUT' ? TARGET : undefined, viewer)).statusCode).toBe(403);
  });

  it("answers another customer's operator 404 and leaves the target as it was", async () => {
    await request('PUT', TARGET);
    const before = await rawCredentials();
    const other = (await h.user('operator', (await h.customer()).id)).auth;
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const response = await request(
        method,
        method === 'PUT' ? { ...TARGET, bucket: 'stolen' } : undefined,
        other,
      );
      expect(response.statusCode).toBe(404);
      expect(response.body).not.toContain('acme-backups');
    }
    expect(await rawCredentials()).toBe(before);
    expect(json(await request('GET'))).toMatchObject({ bucket: 'acme-backups' });
  });

  it('lets an unscoped admin manage any customer; an unknown customer is 404', async () => {
    const admin = (await h.user('admin')).auth;
    expect((await request('GET', undefined, admin)).statusCode).toBe(200);
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await request('PUT', TARGET, admin, unknown)).statusCode).toBe(404);
  });
});

describe('DELETE /api/customers/:id/backup-target', () => {
  it('removes it (backups go to the operator default again) and is idempotent', async () => {
    await request('PUT', TARGET);
    expect((await request('DELETE')).statusCode).toBe(204);
    expect(await rawCredentials()).toBeUndefined();
    const gone = await request('GET');
    expect(gone.statusCode).toBe(404);
    expect(json<{ detail: string }>(gone).detail).toMatch(/no backup target of its own/);
    expect((await request('DELETE')).statusCode).toBe(204);
  });
});
