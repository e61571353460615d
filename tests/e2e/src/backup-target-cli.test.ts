import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, keyringFromEnvironment, type Db } from '@hostctl/db';
import { E2E_DATABASE_URL } from './env.js';
import { operatorApi } from './release-fixtures.js';
import { hostctlProcess } from './cli-process.js';
import { startStack, type Stack } from './stack.js';

/**
 * `hostctl backups target set` against the real API (issue 33, docs/backups.md#a-customers-own-target):
 * it creates the target when there is none (PUT) and otherwise changes only the flags given
 * (PATCH): the other fields and the stored key pair stay; `--reset` sets fields back to their
 * defaults. Where the API refuses to carry the secret over (another endpoint, another key id) the
 * CLI exits 1 naming the field, and the stored target is unchanged.
 */
const SECRET = `secret-${Date.now().toString(36)}-key`;
const KEY_ID = `AKID${Date.now().toString(36).toUpperCase()}`;
let stack: Stack;
let db: Db;
let operator: { customerId: string; key: string };

const hostctl = (input: string, ...args: string[]) =>
  hostctlProcess({ apiUrl: stack.apiUrl, token: operator.key, input }, ...args);

const set = (input: string, ...flags: string[]) =>
  hostctl(input, 'backups', 'target', 'set', operator.customerId, '--json', ...flags);

/** The row as stored, its credentials opened by the client's vault. */
async function stored() {
  const row = await db.customerBackupTarget.findUniqueOrThrow({ where: { customerId: operator.customerId } });
  return { ...row, credentials: row.credentials as { access_key_id: string; secret_access_key: string } };
}

beforeAll(async () => {
  db = createDatabase({ url: E2E_DATABASE_URL, keys: keyringFromEnvironment(process.env) }).db;
  stack = await startStack({ workers: 0 });
  operator = await operatorApi(stack, 'bt-cli');
});
afterAll(async () => {
  await stack?.stop();
  await db?.$disconnect();
});

describe('hostctl backups target set', () => {
  const place = ['--endpoint', 'https://s3.example.com', '--bucket', 'acme-cli-backups'];

  it('keeps the stored secret when --secret-key-stdin is left out, and changes the other fields', async () => {
    const first = await set(`${SECRET}\n`, ...place, '--access-key-id', KEY_ID, '--secret-key-stdin');
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ prefix: 'hostctl', has_credentials: true });

    const edited = await set('', ...place, '--prefix', 'nightly', '--region', 'eu-central-1');
    expect(edited.code, edited.stderr).toBe(0);
    expect(JSON.parse(edited.stdout)).toMatchObject({
      prefix: 'nightly',
      region: 'eu-central-1',
      has_credentials: true,
    });
    expect(edited.stdout).not.toContain(SECRET);
    const row = await stored();
    expect(row.credentials).toEqual({ access_key_id: KEY_ID, secret_access_key: SECRET });
    expect(row).toMatchObject({ prefix: 'nightly', region: 'eu-central-1' });

    // The same key id given again (without its secret) still keeps the pair.
    const sameKey = await set('', ...place, '--access-key-id', KEY_ID, '--prefix', 'weekly');
    expect(sameKey.code, sameKey.stderr).toBe(0);
    expect((await stored()).credentials).toEqual({ access_key_id: KEY_ID, secret_access_key: SECRET });
  });

  it('changes one field without restating the others, and --reset sets fields back to their defaults', async () => {
    const before = await stored();
    const edited = await set('', '--region', 'eu-west-1');
    expect(edited.code, edited.stderr).toBe(0);
    const after = await stored();
    expect(after).toMatchObject({
      endpoint: before.endpoint,
      bucket: before.bucket,
      prefix: before.prefix,
      region: 'eu-west-1',
      credentials: before.credentials,
    });

    const reset = await set('', '--reset', 'prefix,region');
    expect(reset.code, reset.stderr).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({
      prefix: 'hostctl',
      region: 'us-east-1',
      has_credentials: true,
    });
    expect((await stored()).credentials).toEqual({ access_key_id: KEY_ID, secret_access_key: SECRET });
  });

  it.each([
    ['another endpoint', ['--endpoint', 'https://s3.other.example.com', '--bucket', 'acme-cli-backups']],
    ['another bucket', ['--endpoint', 'https://s3.example.com', '--bucket', 'elsewhere']],
    ['another key id', [...place, '--access-key-id', 'AKIDSOMEONEELSE']],
  ])('refuses to carry the secret to %s: exit 1 naming the field, nothing changed', async (_label, flags) => {
    const before = await stored();
    const refused = await set('', ...flags);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/secret_access_key/);
    expect(refused.stderr).not.toContain(SECRET);
    const after = await stored();
    expect(after).toEqual(before);
  });
});
