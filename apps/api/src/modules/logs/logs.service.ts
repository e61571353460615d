import { customerScope, type Principal } from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import type { ServicesStore } from '@hostctl/db';
import type { LogEntry } from '@hostctl/queue';
import { isAtOrAfter, type LogReader } from '../../live/log-reader.js';

export type LogsService = ReturnType<typeof createLogsService>;

export function createLogsService(deps: { services: Pick<ServicesStore, 'findById'>; reader: LogReader }) {
  async function visibleOr404(principal: Principal, id: string): Promise<void> {
    if (!(await deps.services.findById(customerScope(principal), id))) {
      throw new DomainError('not_found', `service ${id} not found`);
    }
  }

  return {
    /** Throws not_found unless the principal may see the service; the stream guard calls it too. */
    visibleOr404,

    async snapshot(
      principal: Principal,
      id: string,
      options: { tail: number; since?: Date },
    ): Promise<LogEntry[]> {
      await visibleOr404(principal, id);
      return (await deps.reader.snapshot(id, options)).entries;
    },

    /**
     * Recent lines, then live ones, until the signal aborts. The credential and the service's
     * visibility are re-checked by the stream guard (apps/api/src/live/stream-guard.ts).
     */
    async follow(
      principal: Principal,
      id: string,
      options: { tail: number; since?: Date },
      emit: (entry: LogEntry) => void,
      signal: AbortSignal,
    ): Promise<void> {
      await visibleOr404(principal, id);
      const { entries, lastId } = await deps.reader.snapshot(id, options);
      entries.forEach(emit);
      // A line backfilled after a shipper gap can arrive live yet be older than `since`.
      const emitLive = (entry: LogEntry) => {
        if (isAtOrAfter(entry, options.since)) emit(entry);
      };
      await deps.reader.follow(id, lastId, emitLive, signal);
    },
  };
}
