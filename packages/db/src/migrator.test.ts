import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from './client.js';
import { migrate } from './migrator.js';
import {
  createFreshDatabase,
  MIGRATIONS_DIR as MIGRATIONS,
  withClient,
  type FreshDatabase,
} from './testing/fresh-database.js';

let fresh: FreshDatabase;
let url: string;

beforeAll(async () => {
  fresh = await createFreshDatabase('hostctl_mig');
  url = fresh.url;
});
afterAll(() => fresh.drop());

describe('migrator', () => {
  it('applies every migration once when two processes start at the same time', async () => {
    const [a, b] = await Promise.all([migrate(url, MIGRATIONS), migrate(url, MIGRATIONS)]);
    expect([...a.applied, ...b.applied].sort()).toEqual([...a.applied, ...a.skipped].sort());
    expect(a.applied.length + b.applied.length).toBeGreaterThan(0);
    const again = await migrate(url, MIGRATIONS);
    expect(again.applied).toEqual([]);
  });

  it('records migrations the way prisma migrate does', async () => {
    const rows = await withClient(url, async (client) => {
      const result = await client.query(
        'SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations',
      );
      return result.rows as { checksum: string; finished_at: Date; applied_steps_count: number }[];
    });
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.checksum).toMatch(/^[0-9a-f]{64}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.applied_steps_count).toBe(1);
    }
  });

  it('produces the schema the generated client expects (every model written and read back)', async () => {
    const db = createDb({ url, max: 2 });
    try {
      const customer = await db.customer.create({ data: { name: 'c' } });
      const user = await db.user.create({
        data: {
          email: 'u@x.test',
          name: 'U',
          role: 'viewer',
          customerId: customer.id,
          oidcIssuer: 'i',
          oidcSubject: 's',
        },
      });
      await db.apiKey.create({ data: { userId: user.id, name: 'k', digest: 'd', expiresAt: new Date() } });
      const service = await db.service.create({
        data: {
          name: 'svc',
          customerId: customer.id,
          status: 'deploying',
          deployMethod: 'git',
          url: 'http://svc',
          customDomains: ['a.test'],
        },
      });
      const deployment = await db.deployment.create({
        data: { serviceId: service.id, trigger: 'create', plan: { a: 1 } },
      });
      await db.deploymentLog.create({
        data: { deploymentId: deployment.id, seq: 1, stream: 'stdout', message: 'm' },
      });
      await db.serviceEvent.create({
        data: { serviceId: service.id, type: 'deploy', status: 'started', message: 'm' },
      });
      const read = await db.service.findUniqueOrThrow({
        where: { id: service.id },
        include: { customer: true, deployments: { include: { logs: true } }, events: true },
      });
      expect(read).toMatchObject({ healthStatus: 'unknown', customDomains: ['a.test'], variables: {} });
      expect(read.deployments[0]?.logs[0]?.seq).toBe(1);
      expect(read.events).toHaveLength(1);
    } finally {
      await db.$disconnect();
    }
  });

  it('enforces the hand-written invariants: live names unique, one queued deployment per service', async () => {
    const db = createDb({ url, max: 2 });
    try {
      const customer = await db.customer.create({ data: { name: 'inv' } });
      const data = {
        name: 'dup',
        customerId: customer.id,
        status: 'running' as const,
        deployMethod: 'compose' as const,
        url: 'u',
      };
      const first = await db.service.create({ data });
      await expect(db.service.create({ data })).rejects.toThrow();
      await db.service.update({ where: { id: first.id }, data: { deletedAt: new Date() } });
      const second = await db.service.create({ data });
      await db.deployment.create({ data: { serviceId: second.id, trigger: 'redeploy' } });
      await expect(
        db.deployment.create({ data: { serviceId: second.id, trigger: 'redeploy' } }),
      ).rejects.toThrow();
      await db.deployment.create({ data: { serviceId: second.id, trigger: 'redeploy', status: 'running' } });
    } finally {
      await db.$disconnect();
    }
  });

  it('refuses a migration edited after it was applied', async () => {
    await withClient(url, (client) =>
      client.query(`UPDATE _prisma_migrations SET checksum = repeat('0', 64)`),
    );
    await expect(migrate(url, MIGRATIONS)).rejects.toThrow(/modified after it was applied/);
  });
});
