import type { SqlPool } from '../client.js';

export type KeyTargetsStore = ReturnType<typeof createKeyTargetsStore>;

/**
 * The owner of a route's target, for the deploy-token check (apps/api/src/plugins/key-limits.ts).
 * Read without a customer scope on purpose: the check compares the owner with the key's limit and
 * answers the same 403 for "someone else's" and "no such thing", so nothing read here reaches the
 * caller. Only limited keys cost these reads; one indexed statement each.
 */
export function createKeyTargetsStore(sql: SqlPool) {
  return {
    async serviceOwner(id: string): Promise<{ customerId: string } | null> {
      const { rows } = await sql.query<{ customerId: string }>({
        name: 'key-target-service',
        text: `SELECT customer_id AS "customerId" FROM services WHERE id = $1 AND deleted_at IS NULL`,
        values: [id],
      });
      return rows[0] ?? null;
    },

    async deploymentOwner(id: string): Promise<{ serviceId: string; customerId: string } | null> {
      const { rows } = await sql.query<{ serviceId: string; customerId: string }>({
        name: 'key-target-deployment',
        text: `SELECT d.service_id AS "serviceId", s.customer_id AS "customerId"
               FROM deployments d JOIN services s ON s.id = d.service_id
               WHERE d.id = $1 AND s.deleted_at IS NULL`,
        values: [id],
      });
      return rows[0] ?? null;
    },

    /** A variable group's customer (docs/secrets.md#variable-groups). */
    async variableGroupOwner(id: string): Promise<{ customerId: string } | null> {
      const { rows } = await sql.query<{ customerId: string }>({
        name: 'key-target-variable-group',
        text: `SELECT customer_id AS "customerId" FROM variable_groups WHERE id = $1`,
        values: [id],
      });
      return rows[0] ?? null;
    },

    /** A one-off run's service and customer (docs/jobs.md): owned like its service's deployments. */
    async runOwner(id: string): Promise<{ serviceId: string; customerId: string } | null> {
      const { rows } = await sql.query<{ serviceId: string; customerId: string }>({
        name: 'key-target-run',
        text: `SELECT r.service_id AS "serviceId", s.customer_id AS "customerId"
               FROM service_runs r JOIN services s ON s.id = r.service_id
               WHERE r.id = $1 AND s.deleted_at IS NULL`,
        values: [id],
      });
      return rows[0] ?? null;
    },
  };
}
