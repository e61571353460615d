import type { Tx } from './release-rollback.js';
import {
  changedDefinition,
  definitionOf,
  DEFINITION_COLUMNS,
  releaseDefinition,
  type CarriedDefinition,
} from './release-definition.js';

/**
 * What cancelling this deployment would keep from running: the parts of the service's definition
 * (variable names, `compose`) in which it differs from the current release. Empty for a
 * deployment that changes nothing `manage` guards, a finished one, or a service without a release.
 *
 * What a deployment carries: what it recorded at its validate step; before that, a rollback its
 * target's definition and any other deployment the service's (a PATCH wrote it there).
 */
export async function definitionChangeOf(tx: Tx, deploymentId: string): Promise<string[]> {
  const deployment = await tx.deployment.findUnique({
    where: { id: deploymentId },
    select: {
      serviceId: true,
      status: true,
      rollbackOf: true,
      ...DEFINITION_COLUMNS,
      service: {
        select: {
          deployMethod: true,
          variables: true,
          secretNames: true,
          variablesVersion: true,
          compose: true,
        },
      },
    },
  });
  if (!deployment || !['queued', 'running'].includes(deployment.status)) return [];
  const release = await releaseDefinition(tx, deployment.serviceId);
  if (!release) return [];
  const target = deployment.rollbackOf
    ? await tx.deployment.findUnique({
        where: { id: deployment.rollbackOf },
        select: DEFINITION_COLUMNS,
      })
    : null;
  const fallback: CarriedDefinition = target ?? definitionOf(deployment.service);
  const carried: CarriedDefinition = {
    sourceVariables: deployment.sourceVariables ?? fallback.sourceVariables,
    sourceSecretNames: deployment.sourceSecretNames ?? fallback.sourceSecretNames,
    // Recorded together with sourceVariables (the validate step): the fallback's otherwise.
    sourceVariablesVersion:
      deployment.sourceVariables !== null
        ? deployment.sourceVariablesVersion
        : fallback.sourceVariablesVersion,
    sourceCompose: deployment.sourceCompose ?? fallback.sourceCompose,
  };
  return changedDefinition(deployment.service.deployMethod, release, carried);
}
