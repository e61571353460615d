import type { DeploymentStatus } from '@hostctl/domain';
import type { Harness } from './harness.js';

/**
 * The worker's side of a deployment, written straight into the database: these API tests run no
 * worker, so a release is a deployment row in the state the worker would have left it.
 */
export interface ReleaseRow {
  status?: DeploymentStatus;
  trigger?: 'create' | 'redeploy' | 'rollback';
  step?: string | null;
  plan?: object | null;
  compose?: string | null;
  variables?: Record<string, string> | null;
  /** Which of `variables` were secret (name → when set), as the worker records them. */
  secretNames?: Record<string, string> | null;
  imageDigests?: Record<string, string> | null;
  updateOrder?: 'start-first' | 'stop-first' | null;
  warnings?: string[];
  commit?: string | null;
  /** Seconds after the epoch base of the service's history, so the order is explicit. */
  at?: number;
}

const BASE = Date.parse('2026-01-01T00:00:00Z');

/** A runnable plan as the worker stores it; the API only needs it to be there. */
const STORED_PLAN = { services: [{ name: 'web', image: 'local/busybox:1' }] };

/** Inserts one deployment of `serviceId` as the worker would have finished (or left) it. */
export async function addDeployment(h: Harness, serviceId: string, row: ReleaseRow = {}): Promise<string> {
  const status = row.status ?? 'succeeded';
  const createdAt = new Date(BASE + (row.at ?? 0) * 1000);
  const isFinished = !['queued', 'running'].includes(status);
  const created = await h.container.db.deployment.create({
    data: {
      serviceId,
      trigger: row.trigger ?? 'redeploy',
      status,
      step: row.step ?? null,
      commit: row.commit ?? null,
      plan: row.plan === null ? undefined : (row.plan ?? STORED_PLAN),
      sourceCompose: row.compose ?? null,
      ...(row.variables ? { sourceVariables: row.variables } : {}),
      ...(row.secretNames ? { sourceSecretNames: row.secretNames } : {}),
      ...(row.imageDigests ? { imageDigests: row.imageDigests } : {}),
      updateOrder: row.updateOrder ?? null,
      ...(row.warnings ? { warnings: row.warnings } : {}),
      createdAt,
      startedAt: status === 'queued' ? null : createdAt,
      finishedAt: isFinished ? new Date(createdAt.getTime() + 1000) : null,
    },
  });
  return created.id;
}

/**
 * Turns the first deployment that POST /api/services queued into a finished one at `at`, so a
 * test can build the rest of the history after it; the service becomes `running` or `failed`.
 */
export async function settleFirst(
  h: Harness,
  serviceId: string,
  deploymentId: string,
  row: Pick<ReleaseRow, 'status' | 'plan' | 'compose' | 'variables' | 'secretNames' | 'at'> = {},
): Promise<void> {
  const status = row.status ?? 'succeeded';
  const createdAt = new Date(BASE + (row.at ?? 0) * 1000);
  await h.container.db.deployment.update({
    where: { id: deploymentId },
    data: {
      status,
      createdAt,
      startedAt: createdAt,
      finishedAt: new Date(createdAt.getTime() + 1000),
      plan: row.plan === null ? undefined : (row.plan ?? STORED_PLAN),
      sourceCompose: row.compose ?? null,
      ...(row.variables ? { sourceVariables: row.variables } : {}),
      ...(row.secretNames ? { sourceSecretNames: row.secretNames } : {}),
    },
  });
  await h.container.db.service.update({
    where: { id: serviceId },
    data: { status: status === 'succeeded' ? 'running' : 'failed' },
  });
}
