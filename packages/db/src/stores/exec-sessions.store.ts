import type { Db } from '../client.js';
import type { ExecSession } from '../generated/client.ts';

export type ExecSessionsStore = ReturnType<typeof createExecSessionsStore>;
export type { ExecSession };

export interface NewExecSession {
  serviceId: string;
  customerId: string;
  component: string;
  command: string[];
  userId: string;
  apiKeyId: string | null;
}

/**
 * Terminals into running services (docs/jobs.md#terminal). The API inserts the row (after its
 * scoped lookup of the service), the worker reads it by id from the job and records the container
 * it opened and how it ended. Typed input never reaches this table.
 */
export function createExecSessionsStore(db: Db) {
  return {
    create(session: NewExecSession): Promise<ExecSession> {
      return db.execSession.create({ data: session });
    },

    findById(id: string): Promise<ExecSession | null> {
      return db.execSession.findUnique({ where: { id } });
    },

    /** Conditional: a session already closed (its client left before the worker came) stays closed. */
    async markOpened(id: string, containerName: string): Promise<boolean> {
      const { count } = await db.execSession.updateMany({
        where: { id, openedAt: null, closedAt: null },
        data: { containerName, openedAt: new Date() },
      });
      return count === 1;
    },

    async close(id: string, outcome: { exitCode: number | null; error: string | null }): Promise<void> {
      await db.execSession.updateMany({
        where: { id, closedAt: null },
        data: { ...outcome, closedAt: new Date() },
      });
    },
  };
}
