import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { COMPONENT_LABEL, OWNER_LABEL, SERVICE_LABEL, INSTANCE_LABEL } from '@hostctl/domain';
import { type ContainerRuntime, type Labels } from '../adapters/runtime.js';
import type { ContainerTelemetry, LogFollow, OutputStream } from '../adapters/telemetry.js';
import { messageOf } from '../pipeline/step-errors.js';
import { secretMasker } from './secret-values.js';
import { createLineSplitter, normalizeTimestamp, parseLine, toDockerSince } from './log-lines.js';
import { createLogWriter, logCursorKey, type LogWriter } from './log-writer.js';
import type { RedisLease } from './redis-lease.js';

/**
 * What one shipper does while it holds the host lease: follows every running container of the
 * installation (Docker events attach followers at once, a periodic resync catches anything
 * missed) and feeds their lines to the writer. Each follower starts from the container's cursor
 * (`since`), dropping lines at or before it, so output produced while nobody shipped is
 * backfilled exactly once. Ends when `signal` aborts or the lease is lost.
 */
export interface ShippingSessionDeps {
  redis: Redis;
  runtime: Pick<ContainerRuntime, 'listContainers'>;
  telemetry: Pick<ContainerTelemetry, 'followLogs' | 'watchEvents'>;
  instance: string;
  maxlen: number;
  resyncMs: number;
  logger: Logger;
  /**
   * A service's secret variable values, masked from its containers' output before it is stored
   * (docs/secrets.md#secret-variables). Looked up once per follower: a changed secret comes with a
   * redeploy, whose new containers get new followers. A failed lookup fails the follower, and the
   * next resync attaches again from the cursor, so nothing is shipped unmasked or lost.
   */
  secretsOf?: (serviceId: string) => Promise<string[]>;
}

interface Follower {
  controller: AbortController;
  follow?: LogFollow;
  attachedAt: number;
  /** A start event came while this follower still ran: follow again once it ends. */
  isRestarted: boolean;
}

const CURSOR_TTL_MS = 7 * 24 * 3600_000;
const STREAM_TTL_MS = 14 * 24 * 3600_000;
const DRAIN_ON_STOP_MS = 3000;

export async function runShippingSession(
  deps: ShippingSessionDeps,
  lease: RedisLease,
  stopSignal: AbortSignal,
  options: { shouldDrain(): boolean },
): Promise<void> {
  const { redis, logger, instance } = deps;
  const session = new AbortController();
  const endSession = () => session.abort();
  stopSignal.addEventListener('abort', endSession, { once: true });
  const signal = session.signal;
  const followers = new Map<string, Follower>();
  const running = new Set<Promise<void>>();
  const mine: Labels = { [OWNER_LABEL]: 'true', [INSTANCE_LABEL]: instance };

  const writer: LogWriter = createLogWriter({
    redis,
    prefix: instance,
    lease,
    maxlen: deps.maxlen,
    cursorTtlMs: CURSOR_TTL_MS,
    streamTtlMs: STREAM_TTL_MS,
    onLeaseLost: endSession,
    onPressure: (isHigh) => {
      for (const follower of followers.values()) {
        if (isHigh) follower.follow?.pause();
        else follower.follow?.resume();
      }
    },
    logger,
  });

  const follow = async (containerId: string, labels: Labels, follower: Follower) => {
    const serviceId = labels[SERVICE_LABEL] ?? '';
    const component = labels[COMPONENT_LABEL] ?? '';
    const secrets = (await deps.secretsOf?.(serviceId)) ?? [];
    const redact = secretMasker(secrets);
    // Lines of an earlier follower of this container must be written before the cursor is read.
    await writer.drain();
    const cursor = (await redis.get(logCursorKey(instance, containerId))) ?? '';
    const splitter = (stream: OutputStream) =>
      createLineSplitter((raw, isTruncated) => {
        const { ts, message } = parseLine(raw, isTruncated);
        const stamp = ts ?? normalizeTimestamp(new Date().toISOString())!;
        if (stamp <= cursor) return; // shipped before this follower started
        writer.push({ containerId, serviceId, component, ts: stamp, stream, message: redact(message) });
      });
    const splitters = { stdout: splitter('stdout'), stderr: splitter('stderr') };
    follower.follow = await deps.telemetry.followLogs(
      containerId,
      // The tail bound: a longer backfill would only be trimmed from the stream again.
      { ...(cursor ? { since: toDockerSince(cursor) } : {}), tail: deps.maxlen },
      (stream, chunk) => splitters[stream].write(chunk),
      follower.controller.signal,
    );
    if (writer.isUnderPressure) follower.follow.pause();
    await follower.follow.done;
    // Output that ended mid-line is complete only when the container stopped, not when we did.
    if (!follower.controller.signal.aborted) {
      splitters.stdout.end();
      splitters.stderr.end();
    }
  };

  const attach = (containerId: string, labels: Labels) => {
    if (signal.aborted || !labels[SERVICE_LABEL]) return;
    const existing = followers.get(containerId);
    if (existing) {
      existing.isRestarted = true;
      return;
    }
    const follower: Follower = {
      controller: new AbortController(),
      attachedAt: Date.now(),
      isRestarted: false,
    };
    followers.set(containerId, follower);
    const task = follow(containerId, labels, follower)
      .catch((error: unknown) => {
        // The next resync attaches again from the cursor: nothing is lost by giving up here.
        if (!follower.controller.signal.aborted)
          logger.warn({ containerId, err: messageOf(error) }, 'following container output failed');
      })
      .finally(() => {
        followers.delete(containerId);
        running.delete(task);
        if (follower.isRestarted) attach(containerId, labels);
      });
    running.add(task);
  };

  const resync = async () => {
    try {
      const listedAt = Date.now();
      const containers = await deps.runtime.listContainers(mine);
      const live = new Set<string>();
      for (const container of containers) {
        if (container.state !== 'running') continue;
        live.add(container.id);
        attach(container.id, container.labels);
      }
      // A stream whose container is gone normally ends by itself; this only unsticks a hung one
      // (and spares followers attached by an event while the list was being read).
      for (const [id, follower] of followers)
        if (!live.has(id) && follower.attachedAt < listedAt) follower.controller.abort();
    } catch (error) {
      logger.warn({ err: messageOf(error) }, 'log shipper resync failed; retrying');
    }
  };

  const watch = async () => {
    while (!signal.aborted) {
      try {
        await deps.telemetry.watchEvents(
          mine,
          (event) => {
            if (event.action === 'start') attach(event.containerId, event.labels);
            if (event.action === 'destroy')
              redis.del(logCursorKey(instance, event.containerId)).catch(() => undefined);
          },
          signal,
        );
      } catch (error) {
        logger.warn({ err: messageOf(error) }, 'Docker event stream ended; reconnecting');
      }
      // Events may have been missed while disconnected: resync after reconnecting.
      await sleep(1000, undefined, { signal }).catch(() => undefined);
      if (!signal.aborted) await resync();
    }
  };

  const renewEvery = Math.max(200, Math.floor(lease.ttlMs / 3));
  let renewedAt = Date.now();
  const renewer = setInterval(() => {
    // A renewal can hang while Redis is unreachable: past the TTL the key may be someone else's.
    if (Date.now() - renewedAt > lease.ttlMs) endSession();
    lease
      .renew()
      .then((isOurs) => {
        if (isOurs) renewedAt = Date.now();
        else endSession();
      })
      .catch(() => undefined);
  }, renewEvery);

  const watching = watch();
  await resync();
  const resyncer = setInterval(() => void resync(), deps.resyncMs);
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });

  clearInterval(resyncer);
  for (const follower of followers.values()) follower.controller.abort();
  await Promise.allSettled([...running, watching]);
  if (options.shouldDrain() && stopSignal.aborted) {
    const bound = new AbortController();
    await Promise.race([
      writer.drain(),
      sleep(DRAIN_ON_STOP_MS, undefined, { signal: bound.signal }).catch(() => undefined),
    ]);
    bound.abort();
  }
  writer.close();
  clearInterval(renewer);
  stopSignal.removeEventListener('abort', endSession);
}
