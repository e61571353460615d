import type { FastifyRequest } from 'fastify';
import { customerScope, type Principal } from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import type { ServicesStore } from '@hostctl/db';
import type { LogEntry } from '@hostctl/queue';
import type { Authenticator } from '../../auth/authenticator.js';
import { isAtOrAfter, type LogReader } from '../../live/log-reader.js';

/** How often a follower's credential and the service's existence are checked again. */
const RECHECK_MS = 5000;

export type LogsService = ReturnType<typeof createLogsService>;

export function createLogsService(deps: {
  services: Pick<ServicesStore, 'findById'>;
  reader: LogReader;
  authenticator: Authenticator;
}) {
  async function visibleOr404(principal: Principal, id: string): Promise<void> {
    if (!(await deps.services.findById(customerScope(principal), id))) {
      throw new DomainError('not_found', `service ${id} not found`);
    }
  }

  return {
    async snapshot(
      principal: Principal,
      id: string,
      options: { tail: number; since?: Date },
    ): Promise<LogEntry[]> {
      await visibleOr404(principal, id);
      return (await deps.reader.snapshot(id, options)).entries;
    },

    /**
     * Recent lines, then live ones. Every few seconds the credential is re-checked (a revoked key or
     * ended session closes the stream) and the service looked up again (deletion closes it).
     */
    async follow(
      request: FastifyRequest,
      id: string,
      options: { tail: number; since?: Date },
      emit: (entry: LogEntry) => void,
      signal: AbortSignal,
    ): Promise<void> {
      await visibleOr404(request.principal as Principal, id);
      const { entries, lastId } = await deps.reader.snapshot(id, options);
      entries.forEach(emit);
      // A line backfilled after a shipper gap can arrive live yet be older than `since`.
      const emitLive = (entry: LogEntry) => {
        if (isAtOrAfter(entry, options.since)) emit(entry);
      };
      await deps.reader.follow(id, lastId, emitLive, signal, {
        recheckMs: RECHECK_MS,
        recheck: async () => visibleOr404(await deps.authenticator.authenticate(request), id),
      });
    },
  };
}
