/**
 * Redis keys shared by the worker (writer) and the API (reader) for live data. The API never talks
 * to Docker: container output reaches it through these streams, so any replica serves any reader.
 */

/** Capped stream of one service's container output; entries: ts (RFC 3339), stream, message. */
export function serviceLogStreamKey(prefix: string, serviceId: string): string {
  return `${prefix}:logs:${serviceId}`;
}

/** Approximate cap of each service log stream (XADD MAXLEN ~). */
export const SERVICE_LOG_STREAM_MAXLEN = 10_000;

/**
 * Pub/sub channel the worker publishes to whenever a deployment gains log lines or changes status.
 * The message is only a wake-up: readers fetch the rows from PostgreSQL, the source of truth.
 */
export function deploymentChannel(prefix: string, deploymentId: string): string {
  return `${prefix}:deployment:${deploymentId}`;
}

/** Pub/sub channel announcing a deleted service, so log followers can close their sockets. */
export function serviceDeletedChannel(prefix: string): string {
  return `${prefix}:service-deleted`;
}

export interface LogEntry {
  timestamp: string;
  stream: 'stdout' | 'stderr';
  message: string;
}

/**
 * Stream of one run's output while it runs (docs/jobs.md#output): entries ts, stream, message as
 * in a service's log stream, then one entry with `end` (the run's status and exit code). Written
 * by the worker running the command, read by the API's followers; the stored output of a
 * finished run stays in PostgreSQL.
 */
export function runOutputStreamKey(prefix: string, runId: string): string {
  return `${prefix}:run-output:${runId}`;
}

/** Approximate cap of each run's output stream (XADD MAXLEN ~): a late follower sees the end. */
export const RUN_OUTPUT_STREAM_MAXLEN = 1_000;

/**
 * The two streams of one terminal (docs/jobs.md#terminal): `in` carries what the API relays from
 * the client (stdin, resize, ping, close) to the worker holding the exec, `out` what the worker
 * relays back (ready, output, exit, error). Each side reads the other's with XREAD BLOCK.
 */
export function execStreamKeys(prefix: string, execSessionId: string): { input: string; output: string } {
  return { input: `${prefix}:exec:${execSessionId}:in`, output: `${prefix}:exec:${execSessionId}:out` };
}

/** Seconds an exec stream outlives its last write (a side that died leaves nothing behind). */
export const EXEC_STREAM_TTL_SECONDS = 120;
/** How often the API side says it is still there; the worker ends a terminal silent for 3 of these. */
export const EXEC_PING_MS = 10_000;
