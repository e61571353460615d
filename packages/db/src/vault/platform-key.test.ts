import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../client.js';
import { migrate } from '../migrator.js';
import { createTlsCertificatesStore } from '../stores/tls-certificates.store.js';
import { createFreshDatabase, MIGRATIONS_DIR, type FreshDatabase } from '../testing/fresh-database.js';
import { keyringFromSettings } from './keyring-settings.js';
import { rewrapDataKeys, sealPlaintextRows } from './maintenance.js';

// The platform's TLS keys at rest (docs/tls.md, docs/secrets.md): sealed with the platform's own
// data key, never PEM in the database; plaintext rows from before are sealed online; a wrong
// key-encryption key refuses; a rotation re-wraps the platform key with the customers' keys.
const run = promisify(execFile);
const newKey = () => randomBytes(32).toString('base64');
const pem = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();

let fresh: FreshDatabase;
let database: Database;
const k1 = newKey();
const opened: Database[] = [];

function openWith(settings: { SECRETS_KEK: string; SECRETS_KEK_ID: string; SECRETS_KEK_RETIRED?: string }) {
  const other = createDatabase({ url: fresh.url, max: 2, keys: keyringFromSettings(settings) });
  opened.push(other);
  return other;
}

async function pgDump(): Promise<string> {
  const { stdout } = await run('pg_dump', ['--data-only', fresh.url], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

const issued = (privateKeyPem: string) => ({
  certificatePem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
  privateKeyPem,
  issuer: 'CN=Pebble',
  notBefore: new Date('2026-11-01T00:00:00Z'),
  notAfter: new Date('2027-01-30T00:00:00Z'),
  renewAfter: new Date('2026-12-31T00:00:00Z'),
});

beforeAll(async () => {
  fresh = await createFreshDatabase('hostctl_platform_key');
  await migrate(fresh.url, MIGRATIONS_DIR);
  database = openWith({ SECRETS_KEK: k1, SECRETS_KEK_ID: 'k1' });
});
afterAll(async () => {
  for (const each of opened) await each.db.$disconnect();
  await fresh.drop();
});

describe('the platform certificate keys at rest', () => {
  it('are sealed with the platform data key: a dump holds no PRIVATE KEY, the keeper reads them back', async () => {
    const store = createTlsCertificatesStore(database.db);
    const accountKey = pem();
    const certificateKey = pem();
    await store.saveAccountKey('*.sealed.test', accountKey);
    await store.saveIssued('*.sealed.test', issued(certificateKey));

    const dump = await pgDump();
    expect(dump).toContain('CERTIFICATE'); // the public chain stays readable
    expect(dump).not.toContain('PRIVATE KEY');
    const { rows } = await database.sql.query<{ owner: string; raw: string }>(
      `SELECT d.customer_id AS owner, c.private_key_pem::text AS raw
       FROM tls_certificates c JOIN data_keys d ON d.id::text = c.private_key_pem ->> 'dk'`,
    );
    expect(rows).toEqual([{ owner: 'platform', raw: expect.stringContaining('hostctl/aes-256-gcm/1') }]);
    expect(await store.find('*.sealed.test')).toMatchObject({
      privateKeyPem: certificateKey,
      accountKeyPem: accountKey,
    });
  });

  it('stored in clear before this change are sealed online and read the same', async () => {
    const plainKey = pem();
    const plainAccount = pem();
    await database.sql.query(
      `INSERT INTO tls_certificates (name, private_key_pem, account_key_pem) VALUES ($1, to_jsonb($2::text), to_jsonb($3::text))`,
      ['*.legacy.test', plainKey, plainAccount],
    );
    expect(await pgDump()).toContain('PRIVATE KEY');

    expect(await sealPlaintextRows(database.db)).toMatchObject({ certificates: 1 });
    expect(await pgDump()).not.toContain('PRIVATE KEY');
    expect(await createTlsCertificatesStore(database.db).find('*.legacy.test')).toMatchObject({
      privateKeyPem: plainKey,
      accountKeyPem: plainAccount,
    });
    expect(await sealPlaintextRows(database.db)).toMatchObject({ certificates: 0 });
  });

  it('refuse a wrong key-encryption key at start, even with no customer key yet', async () => {
    const { rows } = await database.sql.query<{ owner: string }>(
      `SELECT customer_id AS owner FROM data_keys`,
    );
    expect(rows).toEqual([{ owner: 'platform' }]);
    const wrong = openWith({ SECRETS_KEK: newKey(), SECRETS_KEK_ID: 'k1' });
    await expect(wrong.vault.verify()).rejects.toThrow(
      /key-encryption key k1 does not open the data key of platform: the configured key is wrong/,
    );
    await expect(createTlsCertificatesStore(wrong.db).find('*.sealed.test')).rejects.toThrow(/wrong/);
  });

  it('are re-wrapped by a rotation: afterwards the new key alone opens them', async () => {
    const k2 = newKey();
    const during = openWith({ SECRETS_KEK: k2, SECRETS_KEK_ID: 'k2', SECRETS_KEK_RETIRED: `k1:${k1}` });
    expect(await rewrapDataKeys(during.db, during.vault.keys)).toMatchObject({ rewrapped: 1, kekId: 'k2' });

    const after = openWith({ SECRETS_KEK: k2, SECRETS_KEK_ID: 'k2' });
    await after.vault.verify();
    const before = await createTlsCertificatesStore(database.db).find('*.sealed.test');
    expect(await createTlsCertificatesStore(after.db).find('*.sealed.test')).toMatchObject({
      privateKeyPem: before?.privateKeyPem,
    });
    const oldOnly = openWith({ SECRETS_KEK: k1, SECRETS_KEK_ID: 'k1' });
    await expect(oldOnly.vault.verify()).rejects.toThrow(/k2, which is not configured/);
  });
});
