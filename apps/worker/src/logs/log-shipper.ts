import { setTimeout as sleep } from 'node:timers/promises';
import { SERVICE_LOG_STREAM_MAXLEN } from '@hostctl/queue';
import type { ContainerTelemetry } from '../adapters/telemetry.js';
import { messageOf } from '../pipeline/step-errors.js';
import { createRedisLease } from './redis-lease.js';
import { runShippingSession, type ShippingSessionDeps } from './shipping-session.js';

/**
 * Ships the output of this installation's containers into per-service Redis Streams, which is
 * all the API reads. One shipper per Docker host and installation: every worker replica runs
 * one, but only the holder of the host lease (`<prefix>:log-shipper:<engine id>`) ships; the
 * others poll for it and take over within about one lease TTL when the holder dies.
 */
export interface LogShipperDeps extends Omit<ShippingSessionDeps, 'maxlen' | 'resyncMs' | 'telemetry'> {
  telemetry: Pick<ContainerTelemetry, 'engineInfo' | 'followLogs' | 'watchEvents'>;
  /** Lease time to live; a dead holder is replaced within about this long. Default 10 s. */
  leaseTtlMs?: number;
  /** Periodic full resync with the engine, besides Docker events. Default 10 s. */
  resyncMs?: number;
  maxlen?: number;
}

export interface LogShipper {
  start(): void;
  /** Stops following, writes what is already read (bounded) and gives the lease back. */
  stop(): Promise<void>;
  /** For tests: stops the way a killed process would: nothing flushed, the lease left to expire. */
  kill(): Promise<void>;
  /** True while this shipper holds the host lease. */
  readonly isShipping: boolean;
}

export function createLogShipper(deps: LogShipperDeps): LogShipper {
  const leaseTtlMs = deps.leaseTtlMs ?? 10_000;
  const sessionDeps: ShippingSessionDeps = {
    ...deps,
    maxlen: deps.maxlen ?? SERVICE_LOG_STREAM_MAXLEN,
    resyncMs: deps.resyncMs ?? 10_000,
  };
  const stopper = new AbortController();
  let isGraceful = true;
  let isShipping = false;
  let loop: Promise<void> | undefined;

  const engineId = async (): Promise<string | null> => {
    while (!stopper.signal.aborted) {
      try {
        return (await deps.telemetry.engineInfo()).id;
      } catch (error) {
        deps.logger.warn({ err: messageOf(error) }, 'log shipper cannot reach the Docker engine; retrying');
        await sleep(2000, undefined, { signal: stopper.signal }).catch(() => undefined);
      }
    }
    return null;
  };

  const run = async () => {
    const engine = await engineId();
    if (!engine) return;
    const key = `${deps.instance}:log-shipper:${engine}`;
    while (!stopper.signal.aborted) {
      const lease = createRedisLease(deps.redis, key, leaseTtlMs);
      const isAcquired = await lease.tryAcquire().catch(() => false);
      if (!isAcquired) {
        await sleep(Math.max(100, Math.floor(leaseTtlMs / 5)), undefined, { signal: stopper.signal }).catch(
          () => undefined,
        );
        continue;
      }
      isShipping = true;
      deps.logger.info({ lease: key }, 'log shipper holds the host lease; shipping container output');
      try {
        await runShippingSession(sessionDeps, lease, stopper.signal, { shouldDrain: () => isGraceful });
      } catch (error) {
        deps.logger.error({ err: messageOf(error) }, 'log shipping session failed; restarting it');
      } finally {
        isShipping = false;
      }
      // Given back unless killed: a session that failed can be resumed at once (by anyone), and
      // a lease that was lost is not ours to delete (the script compares the token).
      if (isGraceful) await lease.release().catch(() => undefined);
    }
  };

  const halt = async (graceful: boolean) => {
    isGraceful = graceful;
    stopper.abort();
    await loop;
  };

  return {
    start() {
      loop ??= run();
    },
    stop: () => halt(true),
    kill: () => halt(false),
    get isShipping() {
      return isShipping;
    },
  };
}
