import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from './client.js';
import { migrate } from './migrator.js';
import { createFreshDatabase, MIGRATIONS_DIR, type FreshDatabase } from './testing/fresh-database.js';
import { keyringFromEnvironment } from './vault/keyring-settings.js';

// The upgrade path of issue 30 for template services created before a template's passwords were
// secret variables (docs/secrets.md#secret-variables): the migration marks the template's declared
// secret names in the service and in its release records, and never reads or writes a value.

const MIGRATION = '20261129003000_template_secret_names';

let fresh: FreshDatabase;
let database: Database;
let customerId: string;

interface Row {
  id: string;
  variables: unknown;
  secret_names: Record<string, string>;
}

const servicesRaw = async () =>
  (
    await database.sql.query<Row>(
      `SELECT id, variables, secret_names FROM services WHERE customer_id = $1 ORDER BY name`,
      [customerId],
    )
  ).rows;
const releasesRaw = async () =>
  (
    await database.sql.query<{ id: string; source_variables: unknown; source_secret_names: unknown }>(
      `SELECT d.id, d.source_variables, d.source_secret_names FROM deployments d
       JOIN services s ON s.id = d.service_id WHERE s.customer_id = $1 ORDER BY d.created_at`,
      [customerId],
    )
  ).rows;

/**
 * A service as an older release wrote it, with raw SQL: the client knows the newest schema and
 * names columns this one has not got yet. Its variables sealed as the client seals them.
 */
async function service(
  name: string,
  deployMethod: 'template' | 'compose',
  templateId: string | null,
  variables: Record<string, string>,
  secretNames: Record<string, string> = {},
): Promise<{ id: string; variables: Record<string, string> }> {
  const id = randomUUID();
  const sealed = await database.vault.seal(customerId, variables);
  await database.sql.query(
    `INSERT INTO services (id, name, customer_id, status, deploy_method, template_id, variables, secret_names, url, updated_at)
     VALUES ($1, $2, $3, 'running', $4, $5, $6, $7, $8, now())`,
    [
      id,
      name,
      customerId,
      deployMethod,
      templateId,
      JSON.stringify(sealed),
      JSON.stringify(secretNames),
      `http://${name}.test`,
    ],
  );
  return { id, variables };
}

/** A release as an older release wrote it (raw SQL, for the same reason), its variables sealed. */
async function release(
  serviceId: string,
  trigger: string,
  variables: Record<string, string>,
  secretNames: Record<string, string> | null,
  createdAt: Date,
): Promise<{ id: string }> {
  const id = randomUUID();
  const sealed = await database.vault.seal(customerId, variables);
  await database.sql.query(
    `INSERT INTO deployments (id, service_id, trigger, status, source_variables, source_secret_names, created_at)
     VALUES ($1, $2, $3, 'succeeded', $4, $5, $6)`,
    [id, serviceId, trigger, JSON.stringify(sealed), secretNames && JSON.stringify(secretNames), createdAt],
  );
  return { id };
}

beforeAll(async () => {
  fresh = await createFreshDatabase('hostctl_tplsecrets');
  // Migrate up to the migration before this one, write services as an older release did, then migrate.
  const before = await mkdtemp(path.join(os.tmpdir(), 'hostctl-migrations-'));
  for (const entry of await readdir(MIGRATIONS_DIR)) {
    if (entry < MIGRATION)
      await cp(path.join(MIGRATIONS_DIR, entry), path.join(before, entry), { recursive: true });
  }
  await migrate(fresh.url, before);
  await rm(before, { recursive: true });
  database = createDatabase({ url: fresh.url, max: 4, keys: keyringFromEnvironment(process.env) });
  customerId = (await database.db.customer.create({ data: { name: 'older-services' } })).id;
});
afterAll(async () => {
  await database?.db.$disconnect();
  await fresh?.drop();
});

describe(`migration ${MIGRATION}`, () => {
  it('marks template passwords secret in services and releases, changing no value; a second run changes nothing', async () => {
    const pg = await service('a-postgres', 'template', 'postgres', {
      POSTGRES_USER: 'app',
      POSTGRES_DB: 'app',
      POSTGRES_PASSWORD: 'older-generated-pg-1',
    });
    const maria = await service(
      'b-mariadb',
      'template',
      'mariadb',
      { MARIADB_DATABASE: 'app', MARIADB_PASSWORD: 'older-maria-2', MARIADB_ROOT_PASSWORD: 'older-root-3' },
      { MARIADB_ROOT_PASSWORD: '2026-11-01T00:00:00.000Z' },
    );
    // Not a template service: a compose service's variable of the same name stays as it was given.
    const compose = await service('c-compose', 'compose', null, { POSTGRES_PASSWORD: 'compose-plain-4' });
    // Two releases of the postgres service: one from before secret names were recorded, one after.
    const oldRelease = await release(pg.id, 'create', pg.variables, null, new Date(Date.now() - 60_000));
    const newRelease = await release(
      pg.id,
      'redeploy',
      { ...pg.variables, EXTRA: 'e' },
      { EXTRA: '2026-11-02T00:00:00.000Z' },
      new Date(),
    );
    const beforeServices = await servicesRaw();
    const beforeReleases = await releasesRaw();
    // Sealed at rest: the migration cannot read these values, and must not need to.
    expect(JSON.stringify(beforeServices)).not.toContain('older-generated-pg-1');

    await migrate(fresh.url, MIGRATIONS_DIR);

    const after = await servicesRaw();
    // Every sealed value is byte-for-byte what it was.
    expect(after.map((row) => row.variables)).toEqual(beforeServices.map((row) => row.variables));
    expect((await releasesRaw()).map((row) => row.source_variables)).toEqual(
      beforeReleases.map((row) => row.source_variables),
    );
    const marks = Object.fromEntries(after.map((row) => [row.id, row.secret_names]));
    expect(Object.keys(marks[pg.id]!)).toEqual(['POSTGRES_PASSWORD']);
    expect(marks[pg.id]!.POSTGRES_PASSWORD).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Object.keys(marks[maria.id]!).sort()).toEqual(['MARIADB_PASSWORD', 'MARIADB_ROOT_PASSWORD']);
    expect(marks[maria.id]!.MARIADB_ROOT_PASSWORD).toBe('2026-11-01T00:00:00.000Z');
    expect(marks[compose.id]).toEqual({});

    const releases = await database.db.deployment.findMany({
      where: { id: { in: [oldRelease.id, newRelease.id] } },
      orderBy: { createdAt: 'asc' },
    });
    expect(Object.keys(releases[0]!.sourceSecretNames as object)).toEqual(['POSTGRES_PASSWORD']);
    expect(releases[1]!.sourceSecretNames).toMatchObject({ EXTRA: '2026-11-02T00:00:00.000Z' });
    expect(Object.keys(releases[1]!.sourceSecretNames as object).sort()).toEqual([
      'EXTRA',
      'POSTGRES_PASSWORD',
    ]);
    // And the values still open to what was written.
    const opened = await database.db.service.findUniqueOrThrow({ where: { id: pg.id } });
    expect(opened.variables).toEqual(pg.variables);
    expect(releases[0]!.sourceVariables).toEqual(pg.variables);

    // Idempotent: running the same SQL again (as a restore of an older dump followed by a migrate
    // would) changes no row.
    const sql = await readFile(path.join(MIGRATIONS_DIR, MIGRATION, 'migration.sql'), 'utf8');
    const client = await database.sql.connect();
    try {
      await client.query(sql);
    } finally {
      client.release();
    }
    expect(await servicesRaw()).toEqual(after);
  });
});
