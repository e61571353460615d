import { readGroupEnvironment, type Db } from '@hostctl/db';

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

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
