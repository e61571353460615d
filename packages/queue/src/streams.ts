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
