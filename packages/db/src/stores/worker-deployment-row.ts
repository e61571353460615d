import type { Deployment } from '../generated/client.ts';
import { groupVersionsOf } from './group-environment.js';
import type { DeploymentTrigger, WorkerDeployment } from './worker-deployments.types.js';

const TRIGGERS: readonly DeploymentTrigger[] = ['create', 'redeploy', 'rollback'];
const isStringMap = (value: unknown): value is Record<string, string> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.values(value).every((item) => typeof item === 'string');

/** A deployments row as the worker reads it: JSON columns checked, unknown triggers as `create`. */
export const toWorkerDeployment = (row: Deployment): WorkerDeployment => ({
  id: row.id,
  serviceId: row.serviceId,
  trigger: TRIGGERS.find((trigger) => trigger === row.trigger) ?? 'create',
  status: row.status,
  step: row.step,
  createdAt: row.createdAt,
  plan: row.plan,
  commit: row.commit,
  requestedCommit: row.requestedCommit,
  rollbackOf: row.rollbackOf,
  imageDigests: isStringMap(row.imageDigests) ? row.imageDigests : null,
  sourceCompose: row.sourceCompose,
  sourceVariables: isStringMap(row.sourceVariables) ? row.sourceVariables : null,
  sourceSecretNames: isStringMap(row.sourceSecretNames) ? row.sourceSecretNames : null,
  sourceVariablesVersion: row.sourceVariablesVersion,
  sourceVariableGroups: groupVersionsOf(row.sourceVariableGroups),
  startedAt: row.startedAt,
  windowStartedAt: row.windowStartedAt,
});
