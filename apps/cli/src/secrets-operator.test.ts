import { randomBytes, randomUUID } from 'node:crypto';
import { createDatabase, ensureDatabase, keyringFromSettings, migrate, MIGRATIONS_DIR } from '@hostctl/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

/**
 * `hostctl secrets rotate|verify` against a database of its own (a rotation re-wraps every data
 * key in it, which the other tests' database must not see): the operator's rotation re-wraps
 * online, the old key can go afterwards, and a wrong or missing key fails with the reason.
 */
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/hostctl_test';
const name = `hostctl_cli_secrets_${randomUUID().slice(0, 8)}`;
const url = Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();
const k1 = randomBytes(32).toString('base64');
const k2 = randomBytes(32).toString('base64');
const value = `planted-${randomUUID()}`;
let serviceId = '';

async function hostctl(argv: string[], env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    env: { DATABASE_URL: url, ...env },
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    readStdin: async () => '',
    loadOperator: () => import('./operator.js'),
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

async function variablesWith(settings: { SECRETS_KEK: string; SECRETS_KEK_ID: string }) {
  const { db } = createDatabase({ url, max: 1, keys: keyringFromSettings(settings) });
  try {
    return (await db.service.findUniqueOrThrow({ where: { id: serviceId } })).variables;
  } finally {
    await db.$disconnect();
  }
}

beforeAll(async () => {
  await ensureDatabase(url);
  await migrate(url, MIGRATIONS_DIR);
  const { db } = createDatabase({
    url,
    max: 2,
    keys: keyringFromSettings({ SECRETS_KEK: k1, SECRETS_KEK_ID: 'k1' }),
  });
  const customer = await db.customer.create({ data: { name: `cli-secrets-${randomUUID()}` } });
  const service = await db.service.create({
    data: {
      name: 'cli-secrets',
      customerId: customer.id,
      status: 'running',
      deployMethod: 'compose',
      variables: { TOKEN: value },
      url: 'http://cli-secrets.test',
    },
  });
  serviceId = service.id;
  await db.$disconnect();
});
afterAll(async () => {
  const admin = createDatabase({ url: ADMIN_URL, max: 1 });
  await admin.sql.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.db.$disconnect();
});

// Each run opens and closes its own pool, as the operator's command does.
describe('hostctl secrets', { timeout: 30_000 }, () => {
  it('verify refuses a wrong or missing key with the reason (exit 2)', async () => {
    expect((await hostctl(['secrets', 'verify'], { SECRETS_KEK: k1, SECRETS_KEK_ID: 'k1' })).code).toBe(0);
    const wrong = await hostctl(['secrets', 'verify'], { SECRETS_KEK: k2, SECRETS_KEK_ID: 'k1' });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/key-encryption key k1 does not open .* wrong/);
    const missing = await hostctl(['secrets', 'verify'], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('SECRETS_KEK');
    const short = await hostctl(['secrets', 'verify'], { SECRETS_KEK: 'c2hvcnQ=', SECRETS_KEK_ID: 'k1' });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/32 bytes/);
  });

  it('rotate re-wraps under the new key; afterwards the old key alone no longer starts', async () => {
    const rotated = await hostctl(['secrets', 'rotate', '--json'], {
      SECRETS_KEK: k2,
      SECRETS_KEK_ID: 'k2',
      SECRETS_KEK_RETIRED: `k1:${k1}`,
    });
    expect(rotated.code).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ kek_id: 'k2', rewrapped: 1 });
    // Without the retired key now: the new key alone opens everything.
    expect((await hostctl(['secrets', 'verify'], { SECRETS_KEK: k2, SECRETS_KEK_ID: 'k2' })).code).toBe(0);
    expect(await variablesWith({ SECRETS_KEK: k2, SECRETS_KEK_ID: 'k2' })).toEqual({ TOKEN: value });
    const old = await hostctl(['secrets', 'verify'], { SECRETS_KEK: k1, SECRETS_KEK_ID: 'k1' });
    expect(old.code).toBe(2);
    expect(old.stderr).toContain('k2, which is not configured');
  });
});
