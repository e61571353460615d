import type { FastifyBaseLogger } from 'fastify';
import type { AuditStore, NewAuditEvent } from '@hostctl/db';

export type AuditRecorder = ReturnType<typeof createAuditRecorder>;

/**
 * Writes audit events off the request path. A failed insert is logged at error level with the
 * whole event (which holds no secret), so an event is never silently lost: it can be recovered
 * from the log. `flush()` waits for the inserts in flight, so a graceful shutdown drops none.
 */
export function createAuditRecorder(deps: { store: Pick<AuditStore, 'record'> }) {
  const inFlight = new Set<Promise<void>>();
  return {
    record(event: NewAuditEvent, log: FastifyBaseLogger): void {
      const write = deps.store
        .record(event)
        .catch((error: unknown) => {
          log.error({ err: error, auditEvent: event }, 'audit event not recorded');
        })
        .finally(() => inFlight.delete(write));
      inFlight.add(write);
    },

    async flush(): Promise<void> {
      await Promise.all([...inFlight]);
    },
  };
}

/**
 * Retention: deletes events older than `days` once at start (after a short delay) and then every
 * `intervalMs`. Every API replica runs it; the deletes are idempotent, so replicas do not conflict.
 */
export function startAuditRetention(deps: {
  store: Pick<AuditStore, 'deleteOlderThan'>;
  days: number;
  log: FastifyBaseLogger;
  intervalMs?: number;
  now?: () => Date;
}): { stop(): void; runOnce(): Promise<number> } {
  const now = deps.now ?? (() => new Date());
  const runOnce = async (): Promise<number> => {
    const cutoff = new Date(now().getTime() - deps.days * 86_400_000);
    const removed = await deps.store.deleteOlderThan(cutoff);
    if (removed > 0) deps.log.info({ removed, cutoff }, 'audit retention removed old events');
    return removed;
  };
  const tick = () => {
    runOnce().catch((error: unknown) => deps.log.error({ err: error }, 'audit retention failed'));
  };
  const first = setTimeout(tick, 60_000);
  const every = setInterval(tick, deps.intervalMs ?? 3_600_000);
  first.unref();
  every.unref();
  return {
    stop() {
      clearTimeout(first);
      clearInterval(every);
    },
    runOnce,
  };
}
