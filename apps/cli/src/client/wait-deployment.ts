import { setTimeout as sleep } from 'node:timers/promises';
import { must, type DeploymentDetail, type DeploymentLogLine } from '@hostctl/api-client';
import { isFinalDeployment } from '@hostctl/domain';
import { isTransient, type ApiClient } from './api-client.js';

/** A deployment as the CLI prints it: GET /api/deployments/{id} without its log, already streamed. */
export type Deployment = Omit<DeploymentDetail, 'logs'>;

export type WaitResult =
  | { outcome: 'final'; deployment: Deployment }
  | { outcome: 'timed_out'; deployment: Deployment | undefined; lastError: string | undefined };

export interface WaitOptions {
  timeoutMs: number;
  onLog(line: DeploymentLogLine): void;
  onStatus(deployment: Deployment): void;
  /** Longest single long-poll, in seconds; short so log lines arrive while the deployment runs. */
  pollSeconds?: number;
  now?: () => number;
}

/** A request that is late by more than this beyond its own wait is given up and retried. */
const REQUEST_MARGIN_MS = 15_000;

/**
 * Follows a deployment until it is final or the time is up, with the long-poll of
 * GET /api/deployments/:id: `wait` returns at once when the deployment is final, `after_seq` keeps
 * each answer to the lines not yet seen, so the log is streamed in order with nothing repeated.
 *
 * Transient failures (network, 429, 502–504) are retried until the deadline: the deployment runs
 * in the worker whatever happens to this process, so a blip must not turn into a failed pipeline.
 * 401/403/404 end the wait at once (thrown).
 */
export async function waitForDeployment(
  client: ApiClient,
  id: string,
  options: WaitOptions,
): Promise<WaitResult> {
  const now = options.now ?? Date.now;
  const deadline = now() + options.timeoutMs;
  const pollSeconds = options.pollSeconds ?? 3;
  let afterSeq = 0;
  let last: DeploymentDetail | undefined;
  let lastError: string | undefined;
  let backoffMs = 500;
  let finalSeen = false;
  // At least one read, even with a zero timeout: `--timeout 0` reports the state without waiting.
  for (;;) {
    const remainingMs = Math.max(0, deadline - now());
    // After the final status, one more read drains lines written just before it; no time limit on
    // that, the outcome is already known.
    const waitSeconds = finalSeen ? 0 : Math.min(pollSeconds, Math.floor(remainingMs / 1000));
    let deployment: DeploymentDetail;
    try {
      deployment = await must(
        client.withTimeout(waitSeconds * 1000 + REQUEST_MARGIN_MS).GET('/api/deployments/{id}', {
          params: { path: { id }, query: { wait: waitSeconds, after_seq: afterSeq } },
        }),
      );
    } catch (error) {
      if (!isTransient(error)) throw error;
      // The outcome is known; only the last lines of the log are missing.
      if (finalSeen && last) return { outcome: 'final', deployment: withoutLog(last) };
      lastError = (error as Error).message;
      if (now() >= deadline) return { outcome: 'timed_out', deployment: last, lastError };
      const retryAfterMs = ((error as { retryAfterSeconds?: number }).retryAfterSeconds ?? 0) * 1000;
      await sleep(Math.min(Math.max(backoffMs, retryAfterMs), Math.max(0, deadline - now())));
      backoffMs = Math.min(backoffMs * 2, 10_000);
      continue;
    }
    backoffMs = 500;
    lastError = undefined;
    const lines = deployment.logs ?? [];
    for (const line of lines) if (line.seq > afterSeq) options.onLog(line);
    afterSeq = Math.max(afterSeq, deployment.last_seq ?? lines.at(-1)?.seq ?? afterSeq);
    if (!last || last.status !== deployment.status || last.step !== deployment.step)
      options.onStatus(deployment);
    last = deployment;
    if (isFinalDeployment(deployment.status)) {
      // Lines are written before the final status, so an empty read after it means the log is complete.
      if (lines.length === 0) return { outcome: 'final', deployment: withoutLog(deployment) };
      finalSeen = true;
    } else if (now() >= deadline)
      return { outcome: 'timed_out', deployment: withoutLog(deployment), lastError: undefined };
  }
}

/** The deployment as printed by --json: its log already went to stderr line by line. */
function withoutLog(deployment: DeploymentDetail): Deployment {
  const { logs: _logs, ...rest } = deployment;
  return rest;
}
