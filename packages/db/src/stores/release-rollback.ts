import { randomUUID } from 'node:crypto';
import { deploymentEventType, type DeploymentStatus } from '@hostctl/domain';
import type { Db } from '../client.js';
import type { Deployment } from '../generated/client.ts';
import { changedDefinition, definitionOf } from './release-definition.js';
import { changedGroups } from './group-environment.js';
import { claimDeploy, customerOfService, lockCustomerQuota } from './quota-ledger.js';

export type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];

/** Why a rollback cannot be queued; the API turns each into a 404 or 409 naming it. */
export type RollbackRefusal =
  | { reason: 'target_not_found'; targetId: string }
  | { reason: 'target_not_succeeded'; targetId: string; status: DeploymentStatus }
  | { reason: 'target_without_plan'; targetId: string }
  | { reason: 'target_is_current'; targetId: string }
  | { reason: 'no_release' }
  | { reason: 'no_previous_release'; currentId: string }
  /** The target ran other variables (or compose) than the service's, and the caller lacks `manage`. */
  | { reason: 'definition_change_needs_manage'; targetId: string; changed: string[] };

export type RollbackOutcome =
  | {
      queued: true;
      deployment: Deployment;
      target: Pick<Deployment, 'id'>;
      /** The queued deployment the rollback replaced, if there was one. */
      supersededId: string | null;
    }
  | ({ queued: false } & RollbackRefusal);

const TARGET_COLUMNS = {
  id: true,
  status: true,
  createdAt: true,
  commit: true,
  plan: true,
  sourceVariables: true,
  sourceSecretNames: true,
  sourceVariablesVersion: true,
  sourceCompose: true,
  sourceVariableGroups: true,
} as const;

/**
 * Queues a rollback of the service to `targetId` (default: the latest succeeded deployment created
 * before the current release), in one transaction: the service row is locked so two rollbacks of
 * one service decide one after the other, each on the history the other left; a queued
 * deployment is superseded (the partial unique index allows one queued deployment per service,
 * and the rollback is the newer request). The service's compose and variables go back to what the
 * target ran when the rollback succeeds (the worker does it). The caller enqueues after commit.
 *
 * `mayChangeDefinition` is false for a caller without the `manage` action (a deploy token): such a
 * rollback is refused when the target ran other variables or compose than the service has, since
 * that is a change `manage` guards (it could bring back a rotated secret). Decided under the lock,
 * on the definition the rollback would replace.
 */
export async function requestRollback(
  db: Db,
  serviceId: string,
  targetId: string | undefined,
  options: { mayChangeDefinition: boolean },
): Promise<RollbackOutcome> {
  return db.$transaction(async (tx) => {
    // The customer's quota lock before the service row (quota-ledger.ts).
    const customerId = await customerOfService(tx, serviceId);
    if (customerId !== null) await lockCustomerQuota(tx, customerId);
    await tx.$queryRaw`SELECT id FROM services WHERE id = ${serviceId} FOR UPDATE`;
    const current = await tx.deployment.findFirst({
      where: { serviceId, status: 'succeeded' },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: { id: true, createdAt: true },
    });
    const target =
      targetId === undefined
        ? current &&
          (await tx.deployment.findFirst({
            where: { serviceId, status: 'succeeded', createdAt: { lt: current.createdAt } },
            orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
            select: TARGET_COLUMNS,
          }))
        : await tx.deployment.findFirst({ where: { id: targetId, serviceId }, select: TARGET_COLUMNS });

    const refusal = refusalOf(targetId, current, target);
    if (refusal !== null) return { queued: false, ...refusal };
    if (!target) throw new Error('unreachable: a rollback without a target was not refused');
    if (!options.mayChangeDefinition) {
      const service = await tx.service.findUniqueOrThrow({
        where: { id: serviceId },
        select: {
          deployMethod: true,
          variables: true,
          secretNames: true,
          variablesVersion: true,
          compose: true,
        },
      });
      const changed = [
        ...changedDefinition(service.deployMethod, definitionOf(service), target),
        ...(await changedGroups(tx, serviceId, target.sourceVariableGroups)),
      ];
      if (changed.length > 0)
        return { queued: false, reason: 'definition_change_needs_manage', targetId: target.id, changed };
    }

    if (customerId !== null) await claimDeploy(tx, customerId);
    const id = randomUUID();
    const supersededId = await supersedeQueued(tx, serviceId, { kind: 'rollback', id });
    // Compose and variables go back only when the rollback succeeds (the worker's markSucceeded):
    // a rollback that is cancelled, superseded or fails must leave the service's definition alone.
    await tx.service.update({ where: { id: serviceId }, data: { status: 'deploying' } });
    const deployment = await tx.deployment.create({
      data: { id, serviceId, trigger: 'rollback', rollbackOf: target.id, commit: target.commit },
    });
    await tx.serviceEvent.create({
      data: {
        serviceId,
        type: 'rollback',
        status: 'started',
        message: `Rollback ${id} to the release of deployment ${target.id} queued`,
      },
    });
    return { queued: true, deployment, target: { id: target.id }, supersededId };
  });
}

type Target = { id: string; status: DeploymentStatus; plan: unknown } | null;

/** The rules of docs/deployments.md#rollback, in the order a person would check them. */
function refusalOf(
  targetId: string | undefined,
  current: { id: string } | null,
  target: Target,
): RollbackRefusal | null {
  if (targetId !== undefined) {
    if (!target) return { reason: 'target_not_found', targetId };
    if (target.status !== 'succeeded')
      return { reason: 'target_not_succeeded', targetId, status: target.status };
  } else {
    if (!current) return { reason: 'no_release' };
    if (!target) return { reason: 'no_previous_release', currentId: current.id };
  }
  if (target.plan === null) return { reason: 'target_without_plan', targetId: target.id };
  if (target.id === current?.id) return { reason: 'target_is_current', targetId: target.id };
  return null;
}

/**
 * A deployment still waiting in the queue is replaced by a newer request (the latest wins);
 * like the worker's own supersede, its log and the timeline say which deployment replaced it.
 */
export async function supersedeQueued(
  tx: Tx,
  serviceId: string,
  by: { kind: 'rollback' | 'redeploy'; id: string },
): Promise<string | null> {
  const queued = await tx.deployment.findFirst({
    where: { serviceId, status: 'queued' },
    select: { id: true, trigger: true },
  });
  if (!queued) return null;
  const done = await tx.deployment.updateMany({
    where: { id: queued.id, status: 'queued' },
    data: { status: 'superseded', finishedAt: new Date() },
  });
  if (done.count === 0) return null;
  const message = `Deployment ${queued.id} superseded by the ${by.kind} ${by.id}; it was not run`;
  await tx.serviceEvent.create({
    data: {
      serviceId,
      type: deploymentEventType(queued.trigger),
      status: 'info',
      message,
    },
  });
  const last = await tx.deploymentLog.aggregate({ where: { deploymentId: queued.id }, _max: { seq: true } });
  await tx.deploymentLog.create({
    data: { deploymentId: queued.id, seq: (last._max.seq ?? 0) + 1, stream: 'stdout', message },
  });
  return queued.id;
}
