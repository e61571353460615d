import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '@hostctl/auth-policy';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

// PATCH of a customer's own backup bucket (docs/backups.md#a-customers-own-target): one field
// changes, the others and the sealed key pair stay as stored; null sets a field back to its
// default; the secret never follows to another endpoint, bucket or key id; PUT's field bounds and
// endpoint policy apply; the same people may as for PUT.
let h: Harness;
let admin: string;
let customerId: string;

const SECRET = `secret-${Math.random().toString(36).slice(2)}-key`;
const KEY_ID = `AKID${Math.random().toString(36).slice(2, 10).toUpperCase()}`;
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
const TARGET = {
  endpoint: 'https://s3.eu-central-1.example.com',
  bucket: 'acme-backups',
  prefix: 'nightly',
  region: 'eu-central-1',
  ca_certificate: CA,
  access_key_id: KEY_ID,
  secret_access_key: SECRET,
};

beforeAll(async () => {
  h = await createHarness({ BACKUP_TARGET_ALLOWED_HOSTS: '127.0.0.1:9000' });
  admin = (await h.user('admin')).auth;
});
afterAll(async () => h.close());

// Each test owns a customer with the full target above.
beforeEach(async () => {
  customerId = (await h.customer()).id;
  const put = await request('PUT', TARGET);
  expect(put.statusCode, put.body).toBe(200);
});

const request = (method: 'GET' | 'PUT' | 'PATCH', payload?: object, auth = admin, id = customerId) =>
  h.app.inject({
    method,
    url: `/api/customers/${id}/backup-target`,
    headers: { authorization: auth },
    ...(payload ? { payload } : {}),
  });

/** The row as PostgreSQL holds it: the credentials as sealed text, not opened by the client's vault. */
const rawRow = async (id = customerId) =>
  (
    await h.container.db.$queryRaw<
      {
        endpoint: string;
        bucket: string;
        prefix: string;
        region: string;
        ca_pem: string | null;
        sealed: string;
      }[]
    >`SELECT endpoint, bucket, prefix, region, ca_pem, credentials::text AS sealed
        FROM customer_backup_targets WHERE customer_id = ${id}`
  )[0];
/** The key pair, opened by the client's vault. */
const opened = async (id = customerId) =>
  (await h.container.db.customerBackupTarget.findUniqueOrThrow({ where: { customerId: id } }))
    .credentials as Record<string, string>;
const paths = (response: { body: string }) =>
  (json<{ errors?: { path: string }[] }>(response as never).errors ?? []).map((error) => error.path);

describe('PATCH /api/customers/:id/backup-target', () => {
  it('changes one field and keeps the others and the sealed key pair byte for byte', async () => {
    const before = await rawRow();
    const response = await request('PATCH', { region: 'eu-west-1' });
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toMatchObject({
      endpoint: 'https://s3.eu-central-1.example.com:443',
      bucket: 'acme-backups',
      prefix: 'nightly',
      region: 'eu-west-1',
      has_ca_certificate: true,
      has_credentials: true,
    });
    expect(response.body).not.toContain(SECRET);
    expect(await rawRow()).toEqual({ ...before, region: 'eu-west-1' });
    expect(await opened()).toEqual({ access_key_id: KEY_ID, secret_access_key: SECRET });
  });

  it('keeps the key pair when the same endpoint (port written or not), bucket and key id are given', async () => {
    const before = await rawRow();
    const response = await request('PATCH', {
      endpoint: 'https://s3.eu-central-1.example.com:443',
      bucket: 'acme-backups',
      access_key_id: KEY_ID,
      prefix: 'weekly/',
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(await rawRow()).toEqual({ ...before, prefix: 'weekly' });
  });

  it('changes nothing for an empty body and answers the target as stored', async () => {
    const before = await rawRow();
    const response = await request('PATCH', {});
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toMatchObject({
      prefix: 'nightly',
      region: 'eu-central-1',
      has_credentials: true,
    });
    expect(await rawRow()).toEqual(before);
  });

  it('sets prefix, region and CA back to their defaults with null', async () => {
    const response = await request('PATCH', { prefix: null, region: null, ca_certificate: null });
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toMatchObject({
      prefix: 'hostctl',
      region: 'us-east-1',
      has_ca_certificate: false,
    });
    expect(await rawRow()).toMatchObject({ prefix: 'hostctl', region: 'us-east-1', ca_pem: null });
    expect(await opened()).toEqual({ access_key_id: KEY_ID, secret_access_key: SECRET });
  });

  it('moves to another bucket with a new key pair, sealed', async () => {
    const response = await request('PATCH', {
      bucket: 'acme-elsewhere',
      access_key_id: 'AKIDNEW',
      secret_access_key: 'the-new-secret',
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toMatchObject({
      bucket: 'acme-elsewhere',
      prefix: 'nightly',
      region: 'eu-central-1',
    });
    expect(await opened()).toEqual({ access_key_id: 'AKIDNEW', secret_access_key: 'the-new-secret' });
    expect((await rawRow())?.sealed).not.toContain('the-new-secret');
  });

  it.each([
    ['another endpoint', { endpoint: 'https://s3.attacker.example.net' }],
    ['another port of the endpoint', { endpoint: 'https://s3.eu-central-1.example.com:8443' }],
    ['another bucket', { bucket: 'acme-elsewhere' }],
    ['a new access key id', { access_key_id: 'AKIDOTHER' }],
  ])(
    'refuses %s without a new secret, naming /body/secret_access_key, changing nothing',
    async (_l, change) => {
      const before = await rawRow();
      const response = await request('PATCH', { ...change, region: 'eu-west-1' });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(paths(response)).toEqual(['/body/secret_access_key']);
      expect(response.body).not.toContain(SECRET);
      expect(await rawRow()).toEqual(before);
    },
  );

  it.each([
    ['a path in the endpoint', { endpoint: 'https://s3.example.com/bucket' }, ['/body/endpoint']],
    ['a loopback endpoint', { endpoint: 'https://127.0.0.1:9001' }, ['/body/endpoint']],
    ['the cloud metadata address', { endpoint: 'https://169.254.169.254' }, ['/body/endpoint']],
    ['a private address', { endpoint: 'https://10.0.0.5' }, ['/body/endpoint']],
    ['an upper-case bucket', { bucket: 'Backups' }, ['/body/bucket']],
    ['a prefix with a space', { prefix: 'a b' }, ['/body/prefix']],
    ['a region with a slash', { region: 'eu/1' }, ['/body/region']],
    ['a CA that is not PEM', { ca_certificate: 'not a certificate' }, ['/body/ca_certificate']],
    ['a region longer than PUT allows', { region: 'x'.repeat(41) }, ['/body/region']],
    ['an empty bucket', { bucket: '' }, ['/body/bucket']],
    ['a null endpoint (it has no default)', { endpoint: null }, ['/body/endpoint']],
    ['a secret without its key id', { secret_access_key: 'x' }, ['/body/access_key_id']],
    ['an unknown field', { password: 'x' }, ['/body/password']],
    ['two bad fields', { bucket: 'Backups', region: 'eu/1' }, ['/body/bucket', '/body/region']],
  ])('refuses %s with a problem naming each field, changing nothing', async (_l, change, fields) => {
    const before = await rawRow();
    const response = await request('PATCH', change);
    expect(response.statusCode, response.body).toBe(400);
    const problem = json<{ detail: string; errors?: { path: string }[] }>(response);
    for (const field of fields)
      expect(`${problem.detail} ${JSON.stringify(problem.errors)}`).toContain(field);
    expect(await rawRow()).toEqual(before);
  });

  it('admits a changed loopback endpoint over http only when BACKUP_TARGET_ALLOWED_HOSTS lists it', async () => {
    const response = await request('PATCH', {
      endpoint: 'http://127.0.0.1:9000',
      access_key_id: KEY_ID,
      secret_access_key: SECRET,
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toMatchObject({ endpoint: 'http://127.0.0.1:9000', prefix: 'nightly' });
  });

  it('is 404 for a customer without a target, saying so, and creates nothing', async () => {
    const bare = (await h.customer()).id;
    const response = await request('PATCH', { ...TARGET }, admin, bare);
    expect(response.statusCode).toBe(404);
    expect(json<{ detail: string }>(response).detail).toMatch(/has no backup target of its own/);
    expect(await rawRow(bare)).toBeUndefined();
  });
});

describe('who may PATCH', () => {
  it("refuses viewers, even the customer's own (403), and leaves the target", async () => {
    const before = await rawRow();
    const viewer = (await h.user('viewer', customerId)).auth;
    expect((await request('PATCH', { region: 'eu-west-1' }, viewer)).statusCode).toBe(403);
    expect(await rawRow()).toEqual(before);
  });

  it("answers another customer's operator 404 like an unknown customer, and leaves the target", async () => {
    const before = await rawRow();
    const other = (await h.user('operator', (await h.customer()).id)).auth;
    const response = await request(
      'PATCH',
      { bucket: 'stolen', access_key_id: 'A', secret_access_key: 'B' },
      other,
    );
    expect(response.statusCode).toBe(404);
    expect(json<{ detail: string }>(response).detail).toBe(`customer ${customerId} not found`);
    expect(response.body).not.toContain('acme-backups');
    expect(await rawRow()).toEqual(before);
  });

  it("lets the customer's own operator change it", async () => {
    const operator = (await h.user('operator', customerId)).auth;
    const response = await request('PATCH', { prefix: 'by-operator' }, operator);
    expect(response.statusCode, response.body).toBe(200);
    expect(json(response)).toMatchObject({ prefix: 'by-operator' });
  });

  it('refuses a deploy token limited to the customer (403), like PUT', async () => {
    const owner = await h.user('admin');
    const { key, digest } = generateApiKey();
    await h.container.db.apiKey.create({
      data: { userId: owner.id, name: 'limited', digest, customerId, actions: [] },
    });
    const before = await rawRow();
    for (const method of ['PUT', 'PATCH'] as const)
      expect(
        (await request(method, method === 'PUT' ? TARGET : { region: 'eu-west-1' }, `Bearer ${key}`))
          .statusCode,
      ).toBe(403);
    expect(await rawRow()).toEqual(before);
  });

  it('records an audit event like PUT (the route, the customer, the outcome; never the body)', async () => {
    await request('PATCH', { region: 'eu-west-1' });
    const eventOf = (method: string) =>
      h.container.db.auditEvent.findFirst({
        where: { route: '/api/customers/:id/backup-target', method, targetId: customerId },
      });
    await expect.poll(async () => (await eventOf('PATCH'))?.statusCode).toBe(200);
    const [put, patch] = await Promise.all([eventOf('PUT'), eventOf('PATCH')]);
    expect(patch).toMatchObject({
      targetType: put?.targetType,
      customerId,
      action: expect.stringMatching(/update$/),
    });
    expect(JSON.stringify(patch)).not.toContain('eu-west-1');
  });
});
