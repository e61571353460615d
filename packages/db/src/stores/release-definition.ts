import type { Prisma } from '../generated/client.ts';
import { isRepositoryMethod } from '@hostctl/domain';
import type { Tx } from './release-rollback.js';

/**
 * A service's definition is what `manage` guards and a release runs: its variables and, for the
 * methods whose compose document the customer wrote (compose, template), that document. A git or
 * ai service's compose is generated from the commit a deployment checked out, which `deploy` may
 * choose (a redeploy takes the branch's head, a rollback an earlier commit), so it is not compared.
 *
 * Two rules rest on it (docs/deployments.md#what-the-service-reports):
 * - a caller without `manage` may not start or cancel a deployment that would change the
 *   definition the service runs (`changedDefinition`);
 * - the variables and compose the API reports are the current release's: when a deployment that
 *   carried a change does not succeed, the service gets back those of the release still running
 *   (`alignWithRelease`).
 */
export interface ServiceDefinition {
  deployMethod: string;
  variables: unknown;
  /** Which variables are secret (name → when set; docs/secrets.md#secret-variables). */
  secretNames: unknown;
  /** services.variables_version: which write of `variables` and `secretNames` this is. */
  variablesVersion: number;
  compose: string | null;
}

/** What a deployment runs (or ran): null where it recorded nothing (older rows). */
export interface CarriedDefinition {
  sourceVariables: unknown;
  sourceSecretNames: unknown;
  /** The version of the service's variables it carries (null: older rows, compared by value). */
  sourceVariablesVersion: number | null;
  sourceCompose: string | null;
}

const asVariables = (value: unknown): Record<string, string> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, string>)
    : null;

/**
 * What would differ if `to` ran instead of `from`: the names of the variables added, removed or
 * changed (never their values: the answer goes into a problem body), and `compose` when the
 * customer-written document differs. Unrecorded parts (null) are taken as unchanged.
 */
export function changedDefinition(
  deployMethod: string,
  from: CarriedDefinition,
  to: CarriedDefinition,
): string[] {
  const changed: string[] = [];
  const before = asVariables(from.sourceVariables);
  const after = asVariables(to.sourceVariables);
  // One version on both sides: nothing wrote the variables in between, so they are the same.
  const sameVersion =
    from.sourceVariablesVersion !== null && from.sourceVariablesVersion === to.sourceVariablesVersion;
  if (before && after && !sameVersion) {
    const names = new Set([...Object.keys(before), ...Object.keys(after)]);
    // A name that is secret on one side and plain on the other changes too: restoring it as plain
    // would show a secret's value in the detail.
    const wasSecret = asVariables(from.sourceSecretNames);
    const isSecret = asVariables(to.sourceSecretNames);
    const markChanged = (name: string) =>
      wasSecret !== null && isSecret !== null && name in wasSecret !== name in isSecret;
    for (const name of [...names].sort())
      if (before[name] !== after[name] || (name in before && name in after && markChanged(name)))
        changed.push(name);
  }
  const isWritten = !isRepositoryMethod(deployMethod);
  if (isWritten && from.sourceCompose !== null && to.sourceCompose !== null) {
    if (from.sourceCompose !== to.sourceCompose) changed.push('compose');
  }
  return changed;
}

/** The service's definition as a deployment would carry it. */
export function definitionOf(service: ServiceDefinition): CarriedDefinition {
  return {
    sourceVariables: service.variables,
    sourceSecretNames: service.secretNames,
    sourceVariablesVersion: service.variablesVersion,
    sourceCompose: service.compose,
  };
}

/** The columns of a deployment that make up the definition it carries. */
export const DEFINITION_COLUMNS = {
  sourceVariables: true,
  sourceSecretNames: true,
  sourceVariablesVersion: true,
  sourceCompose: true,
} as const;

/** The definition of the service's current release (its latest succeeded deployment), if any. */
export async function releaseDefinition(tx: Tx, serviceId: string): Promise<CarriedDefinition | null> {
  return tx.deployment.findFirst({
    where: { serviceId, status: 'succeeded' },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: DEFINITION_COLUMNS,
  });
}

/**
 * Gives the service the variables and compose of the release still running, after a deployment
 * that would have changed them ended without succeeding. The caller has checked that no other
 * deployment of the service is in flight (that one's request owns the service's definition).
 */
export async function alignWithRelease(tx: Tx, serviceId: string): Promise<void> {
  const release = await releaseDefinition(tx, serviceId);
  if (!release) return;
  const data: Prisma.ServiceUpdateManyMutationInput = {};
  const variables = asVariables(release.sourceVariables);
  if (variables) data.variables = variables;
  // Values and marks go back as a pair (an older row recorded no marks: the service keeps its own).
  const secretNames = asVariables(release.sourceSecretNames);
  if (variables && secretNames) data.secretNames = secretNames;
  if (release.sourceCompose !== null) data.compose = release.sourceCompose;
  if (Object.keys(data).length === 0) return;
  await tx.service.updateMany({ where: { id: serviceId, deletedAt: null }, data });
}
