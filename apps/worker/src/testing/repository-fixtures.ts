import { randomUUID } from 'node:crypto';
import type { Db } from '@hostctl/db';
import type { CreatedService } from './fixtures.js';

/** A git or ai service with its queued deployment, created the way the API creates it. */
export async function createRepositoryService(
  db: Db,
  input: { method: 'git' | 'ai'; url: string; branch?: string; variables?: Record<string, string> },
): Promise<CreatedService & { name: string }> {
  const suffix = randomUUID().slice(0, 8);
  const name = `${input.method}-${suffix}`;
  return db.$transaction(async (tx) => {
    const customer = await tx.customer.create({ data: { name: `worker-test-${suffix}` } });
    const service = await tx.service.create({
      data: {
        name,
        customerId: customer.id,
        status: 'deploying',
        deployMethod: input.method,
        variables: input.variables ?? {},
        ...(input.method === 'git'
          ? { gitUrl: input.url, gitBranch: input.branch ?? null }
          : { aiUrl: input.url }),
        url: `http://${name}.apps.localhost`,
      },
    });
    const deployment = await tx.deployment.create({ data: { serviceId: service.id, trigger: 'create' } });
    return { serviceId: service.id, deploymentId: deployment.id, customerId: customer.id, name };
  });
}

export async function deploymentLog(db: Db, deploymentId: string): Promise<string[]> {
  const rows = await db.deploymentLog.findMany({ where: { deploymentId }, orderBy: { seq: 'asc' } });
  return rows.map((row) => row.message);
}
