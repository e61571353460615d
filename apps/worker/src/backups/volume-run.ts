import type { Job } from 'bullmq';
import type { AdvisoryLocks, WorkerService, WorkerServiceStore } from '@hostctl/db';
import type { Logger } from 'pino';
import { PermanentStepError, createRedactor, messageOf } from '../pipeline/step-errors.js';
import { lockOrDelay, repositoryLockOrDelay, type ReleaseWindows } from '../processors/service-lock.js';
import type { RuntimeDriver } from '../runtime/driver.js';
import type { VolumeEngine } from './volume-engine.js';

type Log = (line: string) => Promise<void>;

/** What a backup and a restore run share from their deps. */
export interface VolumeRunDeps {
  services: Pick<WorkerServiceStore, 'findById' | 'setStatus'>;
  locks: AdvisoryLocks;
  /** A release in its window owns the service: a run waits for it (processors/service-lock.ts). */
  deployments: ReleaseWindows;
  engine: Pick<VolumeEngine, 'cleanUp'>;
  /** The runtime, which may refuse backups and restores for now (Swarm: volumes live on the nodes). */
  driver: Pick<RuntimeDriver, 'refusal'>;
  logger: Logger;
}

/** One run's row and how to record it (its log, its start, its failure). */
export interface VolumeRun {
  kind: 'backup' | 'restore';
  id: string;
  serviceId: string;
  /** The customer whose repository the run reads or writes (null: none, the run fails early). */
  repositoryOf: string | null;
  status: string;
  appendLog(line: string): Promise<unknown>;
  start(): Promise<unknown>;
  /** Records the run as failed with this (already redacted) reason. */
  fail(reason: string): Promise<unknown>;
}

/**
 * The frame of a backup or restore job: it holds the service's lock for the whole run, so no
 * deploy, lifecycle action or reconciler repair touches the service meanwhile, and its customer's
 * repository lock, so no other run of the customer meets restic's lock; its outcome is the
 * row (a failed run is `failed` with its reason and the job itself succeeds); a worker that died
 * mid-run leaves the job to run again from the start. The service's variables are redacted from
 * every log line and reason. `body` does the work and records success itself.
 */
export async function runOnService(
  deps: VolumeRunDeps,
  job: Job,
  token: string | undefined,
  run: VolumeRun,
  body: (service: WorkerService, log: Log) => Promise<void>,
): Promise<void> {
  // Only a run still to do: a finished one, or a `missed` record of a schedule, is left as it is.
  if (run.status !== 'queued' && run.status !== 'running') return;
  const serviceLease = await lockOrDelay(deps.locks, run.serviceId, job, token, { store: deps.deployments });
  const repositoryLease = run.repositoryOf
    ? await repositoryLockOrDelay(deps.locks, run.repositoryOf, serviceLease, job, token)
    : null;
  let redact = (text: string) => text;
  const log: Log = async (line) => {
    await run.appendLog(redact(line));
  };
  try {
    if (run.status === 'running') await log(`a worker stopped during this ${run.kind}: starting it again`);
    await run.start();
    await deps.engine.cleanUp(run.id);
    const service = await deps.services.findById(run.serviceId);
    if (!service || service.deletedAt) throw new PermanentStepError('the service was deleted');
    redact = createRedactor(service.variables);
    const refused = deps.driver.refusal(run.kind);
    if (refused) throw new PermanentStepError(refused);
    await body(service, log);
  } catch (error) {
    const reason = redact(messageOf(error));
    deps.logger.warn(
      { [`${run.kind}Id`]: run.id, serviceId: run.serviceId, err: reason },
      `${run.kind} failed`,
    );
    await log(`${run.kind} failed: ${reason}`);
    await run.fail(reason);
  } finally {
    await deps.engine.cleanUp(run.id).catch(() => undefined);
    await repositoryLease?.release();
    await serviceLease.release();
  }
}
