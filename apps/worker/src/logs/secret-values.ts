import { readGroupEnvironment, type Db, type WorkerDeployment } from '@hostctl/db';
import { createRedactor } from '../pipeline/step-errors.js';

/**
 * The values of a service's secret variables and of its groups' secret ones (docs/secrets.md), read when the
 * shipper starts following one of its containers so that a secret the application prints never
 * reaches the log stream in Redis or the API's logs route. No service (deleted): nothing to mask.
 */
export function secretValuesOf(db: Db): (serviceId: string) => Promise<string[]> {
  return async (serviceId) => {
    const row = await db.service.findUnique({
      where: { id: serviceId },
      select: { variables: true, secretNames: true },
    });
    if (!row) return [];
    const variables = isMap(row.variables) ? row.variables : {};
    const names = isMap(row.secretNames) ? Object.keys(row.secretNames) : [];
    const own = names.flatMap((name) => {
      const value = variables[name];
      return typeof value === 'string' ? [value] : [];
    });
    // The attached variable groups' secrets reach the container's environment as well.
    const { secretValues } = await readGroupEnvironment(db, serviceId);
    return [...own, ...secretValues];
  };
}

/**
 * The secret values a release recorded (deployments.source_variables marked by source_secret_names):
 * its containers hold them until the next deployment, even after the service's secret changed.
 */
export function releaseSecretValues(
  release: Pick<WorkerDeployment, 'sourceVariables' | 'sourceSecretNames'>,
): string[] {
  const variables = release.sourceVariables ?? {};
  return Object.keys(release.sourceSecretNames ?? {}).flatMap((name) => {
    const value = variables[name];
    return value === undefined ? [] : [value];
  });
}

/**
 * Masks these secret values from a tenant's own output (application logs, one-off runs): the
 * deploy log's redactor (createRedactor: values of 4+ characters, longest first, as `***`).
 */
export function secretMasker(values: readonly string[]): (text: string) => string {
  return createRedactor(Object.fromEntries(values.map((value, index) => [String(index), value])));
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
