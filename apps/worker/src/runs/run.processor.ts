import type { Job } from 'bullmq';
import type { Plan } from '@hostctl/compose';
import {
  isFinalRun,
  type RunOutcome,
  type RunsStore,
  type WorkerDeployment,
  type WorkerDeploymentStore,
} from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import type { Logger } from 'pino';
import type { RuntimeDriver } from '../runtime/driver.js';
import { pinnedPlan, storedPlan } from '../release/release-images.js';
import { watchForCancellation } from './cancel-watch.js';
import { releaseSecretValues, secretMasker } from '../logs/secret-values.js';
import type { LiveOutput } from './live-output.js';

interface RunProcessorDeps {
  runs: RunsStore;
  deployments: Pick<WorkerDeploymentStore, 'lastSucceeded'>;
  /** The runtime that runs the command (a container, or a Swarm job: docs/jobs.md#swarm). */
  driver: Pick<RuntimeDriver, 'refusal' | 'runOnce' | 'removeRunLeftovers'>;
  /** The service's and its groups' secret values now (logs/secret-values.ts, as the log shipper masks). */
  secretsOf: (serviceId: string) => Promise<string[]>;
  /** The run's output stream for followers (live-output.ts), masked with the same values. */
  liveOutput?: (runId: string, secrets: readonly string[]) => LiveOutput;
  logger: Logger;
}

const failure = (error: string): RunOutcome => ({
  status: 'failed',
  exitCode: null,
  output: '',
  outputTruncated: false,
  error,
});

/**
 * A one-off run (docs/jobs.md): the command in a short-lived container (a Swarm job under
 * RUNTIME=swarm) of the release that serves now, with that release's image (pinned), variables,
 * limits, network and egress policy. At most
 * once: a job handed back after its worker died finds the run `running`, removes what is left of
 * its container (or job) and records the failure instead of running the command a second time.
 */
export function createRunProcessor(deps: RunProcessorDeps) {
  const { runs, driver } = deps;
  return async (job: Job<JobPayload<'run'>>): Promise<{ status: string }> => {
    const run = await runs.findById(job.data.runId);
    if (!run || isFinalRun(run.status)) return { status: run?.status ?? 'gone' };
    if (run.status === 'running') {
      await driver.removeRunLeftovers(run.id);
      await runs.finish(run.id, failure('the worker running the command stopped; it may have run in part'));
      return { status: 'failed' };
    }
    const refused = driver.refusal('run');
    if (refused) {
      await runs.finish(run.id, failure(refused));
      return { status: 'failed' };
    }
    const release = await deps.deployments.lastSucceeded(run.serviceId);
    const plan = release ? releasePlan(release) : undefined;
    if (!release || !plan) {
      await runs.finish(run.id, failure('the service has no release to run the command from'));
      return { status: 'failed' };
    }
    // Masked as the application's log is (docs/secrets.md#secret-variables), plus the secrets the
    // release recorded: its containers hold those until the next deployment, even once rotated.
    const secrets = [...(await deps.secretsOf(run.serviceId)), ...releaseSecretValues(release)];
    const redact = secretMasker(secrets);
    if (!(await runs.start(run.id, release.id))) return { status: 'not queued' };
    const live = deps.liveOutput?.(run.id, secrets);
    const cancellation = watchForCancellation(runs, run.id);
    try {
      const result = await driver.runOnce({
        serviceId: run.serviceId,
        releaseId: release.id,
        plan,
        component: run.component,
        command: run.command,
        networkOf: release.id,
        runId: run.id,
        timeoutMs: run.timeoutSeconds * 1000,
        signal: cancellation.signal,
        redact,
        ...(live ? { live } : {}),
      });
      const outcome: RunOutcome = {
        status: result.timedOut ? 'timed_out' : result.exitCode === 0 ? 'succeeded' : 'failed',
        exitCode: result.exitCode,
        output: result.output,
        outputTruncated: result.outputTruncated,
        error: result.timedOut ? `stopped after the timeout of ${run.timeoutSeconds} s` : null,
      };
      // A cancelled run is final already: finish changes only a run that is not.
      await runs.finish(run.id, outcome);
      // After the row is final, so a follower that stops here reads the final run.
      await live?.end(cancellation.signal.aborted ? 'cancelled' : outcome.status, outcome.exitCode);
      return { status: cancellation.signal.aborted ? 'cancelled' : outcome.status };
    } catch (error) {
      // The engine's message (image gone, name taken): never the command's variables.
      const message = redact((error as Error).message);
      deps.logger.warn({ runId: run.id, serviceId: run.serviceId, err: message }, 'run failed to start');
      await runs.finish(run.id, failure(`the command could not be run: ${message}`));
      await live?.end('failed', null);
      return { status: 'failed' };
    } finally {
      cancellation.stop();
    }
  };
}

/** What the release runs, images pinned when it recorded them; undefined when it stored no plan. */
function releasePlan(release: WorkerDeployment): Plan | undefined {
  try {
    return release.imageDigests ? pinnedPlan(release) : storedPlan(release);
  } catch {
    return storedPlan(release);
  }
}
