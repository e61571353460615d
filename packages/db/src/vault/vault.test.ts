import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../client.js';
import { migrate } from '../migrator.js';
import { createServicesStore } from '../stores/services.store.js';
import { createWorkerDeploymentStore } from '../stores/worker-deployments.store.js';
import { createFreshDatabase, MIGRATIONS_DIR, type FreshDatabase } from '../testing/fresh-database.js';
import { SecretsKeyError } from './key-encryption-keys.js';
import { keyringFromSettings } from './keyring-settings.js';
import { rewrapDataKeys, sealPlaintextRows } from './maintenance.js';

const run = promisify(execFile);
const newKey = () => randomBytes(32).toString('base64');
/** Distinct, greppable values: one of them in a dump means a plaintext copy. */
const planted = () => `planted-${randomUUID()}`;
const ALL = { kind: 'all' } as const;

let fresh: FreshDatabase;
let database: Database;
let customerId: string;
const k1 = newKey();
const opened: Database[] = [];

function openWith(settings: { SECRETS_KEK: string; SECRETS_KEK_ID: string; SECRETS_KEK_RETIRED?: string }) {
  const other = createDatabase({ url: fresh.url, max: 2, keys: keyringFromSettings(settings) });
  opened.push(other);
  return other;
}

async function newService(variables: Record<string, string>) {
  return database.db.service.create({
    data: {
      name: `svc-${randomUUID().slice(0, 8)}`,
      customerId,
      status: 'running',
      deployMethod: 'compose',
      compose: 'services: {}',
      variables,
      url: 'http://svc.test',
    },
  });
}

async function pgDump(): Promise<string> {
  const { stdout } = await run('pg_dump', ['--data-only', fresh.url], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

beforeAll(async () => {
  fresh = await createFreshDatabase('hostctl_vault');
  await migrate(fresh.url, MIGRATIONS_DIR);
  database = openWith({ SECRETS_KEK: k1, SECRETS_KEK_ID: 'k1' });
  customerId = (await database.db.customer.create({ data: { name: `vault-${randomUUID()}` } })).id;
});
afterAll(async () => {
  for (const each of opened) await each.db.$disconnect();
  await fresh.drop();
});

describe('variables at rest', () => {
  it('are sealed in every copy (service, release record, plan environment) and read back as written', async () => {
    const values = { DB_PASSWORD: planted(), API_TOKEN: planted(), RELEASE_ONLY: planted() };
    const service = await newService({ DB_PASSWORD: values.DB_PASSWORD, API_TOKEN: values.API_TOKEN });
    const deployment = await database.db.deployment.create({
      data: { serviceId: service.id, trigger: 'create' },
    });
    const deployments = createWorkerDeploymentStore(database.db);
    await deployments.record(deployment.id, { sourceVariables: { RELEASE_ONLY: values.RELEASE_ONLY } });
    const plan = {
      containers: [{ name: 'web', image: 'local/busybox:1', environment: { TOKEN: values.API_TOKEN } }],
      web: { container: 'web', port: 8080 },
    };
    await deployments.savePlan(deployment.id, plan);

    const dump = await pgDump();
    for (const value of Object.values(values)) expect(dump).not.toContain(value);
    expect(dump).toContain('hostctl/aes-256-gcm/1');

    const read = await database.db.service.findUniqueOrThrow({ where: { id: service.id } });
    expect(read.variables).toEqual({ DB_PASSWORD: values.DB_PASSWORD, API_TOKEN: values.API_TOKEN });
    const detail = await createServicesStore(database.db, database.sql, database.vault).findById(
      ALL,
      service.id,
    );
    expect(detail?.variables).toEqual(read.variables);
    const recorded = await deployments.findById(deployment.id);
    expect(recorded?.sourceVariables).toEqual({ RELEASE_ONLY: values.RELEASE_ONLY });
    expect(recorded?.plan).toEqual(plan);
    // What SQL reads of the plan besides the environment stays readable (health checks).
    const { rows } = await database.sql.query<{ web: unknown }>(
      `SELECT plan -> 'web' AS web FROM deployments WHERE id = $1`,
      [deployment.id],
    );
    expect(rows[0]?.web).toEqual(plan.web);
  });

  it('refuse a wrong or missing key with the reason instead of an empty value', async () => {
    const service = await newService({ SECRET: planted() });
    const wrong = openWith({ SECRETS_KEK: newKey(), SECRETS_KEK_ID: 'k1' });
    await expect(wrong.vault.verify()).rejects.toThrow(/key-encryption key k1 does not open .*wrong/);
    await expect(wrong.db.service.findUnique({ where: { id: service.id } })).rejects.toBeInstanceOf(
      SecretsKeyError,
    );
    const unknown = openWith({ SECRETS_KEK: newKey(), SECRETS_KEK_ID: 'k9' });
    await expect(unknown.vault.verify()).rejects.toThrow(
      /wrapped with key-encryption key k1, which is not configured/,
    );
    const keyless = createDatabase({ url: fresh.url, max: 1 });
    opened.push(keyless);
    await expect(keyless.db.service.findUnique({ where: { id: service.id } })).rejects.toThrow(/SECRETS_KEK/);
    await expect(
      keyless.db.service.update({ where: { id: service.id }, data: { variables: { SECRET: 'x' } } }),
    ).rejects.toThrow(/SECRETS_KEK/);
  });

  it('refuse a value whose ciphertext was changed', async () => {
    const service = await newService({ SECRET: planted() });
    await database.sql.query(
      `UPDATE services SET variables = jsonb_set(variables, '{ct}', to_jsonb(reverse(variables ->> 'ct'))) WHERE id = $1`,
      [service.id],
    );
    await expect(database.db.service.findUnique({ where: { id: service.id } })).rejects.toThrow(
      /integrity check/,
    );
  });

  it('written before encryption existed are sealed online without losing a value', async () => {
    const value = planted();
    const service = await newService({});
    const deployment = await database.db.deployment.create({
      data: { serviceId: service.id, trigger: 'create' },
    });
    await database.sql.query(`UPDATE services SET variables = $2 WHERE id = $1`, [
      service.id,
      { OLD: value },
    ]);
    const plan = { containers: [{ name: 'web', environment: { OLD: value } }] };
    await database.sql.query(`UPDATE deployments SET source_variables = $2, plan = $3 WHERE id = $1`, [
      deployment.id,
      { OLD: value },
      plan,
    ]);
    expect(await pgDump()).toContain(value);

    const report = await sealPlaintextRows(database.db);
    expect(report.services).toBeGreaterThanOrEqual(1);
    expect(report.deployments).toBeGreaterThanOrEqual(1);
    expect(await pgDump()).not.toContain(value);
    expect((await database.db.service.findUniqueOrThrow({ where: { id: service.id } })).variables).toEqual({
      OLD: value,
    });
    const after = await database.db.deployment.findUniqueOrThrow({ where: { id: deployment.id } });
    expect(after.sourceVariables).toEqual({ OLD: value });
    expect(after.plan).toEqual(plan);
    expect(await sealPlaintextRows(database.db)).toEqual({ services: 0, deployments: 0, certificates: 0 });
  });
});

describe('key rotation', () => {
  it('re-wraps every data key under the new key; afterwards the old key can be removed', async () => {
    const value = planted();
    const service = await newService({ KEPT: value });
    const k2 = newKey();
    const during = openWith({ SECRETS_KEK: k2, SECRETS_KEK_ID: 'k2', SECRETS_KEK_RETIRED: `k1:${k1}` });
    await during.vault.verify();
    const report = await rewrapDataKeys(during.db, during.vault.keys);
    expect(report.rewrapped).toBeGreaterThanOrEqual(1);
    expect(await rewrapDataKeys(during.db, during.vault.keys)).toMatchObject({ rewrapped: 0, kekId: 'k2' });

    const after = openWith({ SECRETS_KEK: k2, SECRETS_KEK_ID: 'k2' });
    await after.vault.verify();
    expect((await after.db.service.findUniqueOrThrow({ where: { id: service.id } })).variables).toEqual({
      KEPT: value,
    });
    const oldOnly = openWith({ SECRETS_KEK: k1, SECRETS_KEK_ID: 'k1' });
    await expect(oldOnly.vault.verify()).rejects.toThrow(/k2, which is not configured/);
    // The process that ran before the rotation still reads (its data keys did not change).
    expect((await database.db.service.findUniqueOrThrow({ where: { id: service.id } })).variables).toEqual({
      KEPT: value,
    });
  });
});
