import type { DefaultJobOptions } from 'bullmq';
import { Type, type Static, type TLiteral, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { LIFECYCLE_ACTIONS, type LifecycleAction } from '@hostctl/domain';

export const QUEUES = {
  /** Long jobs: deploy/redeploy and delete. */
  deployments: 'deployments',
  /** Short jobs the API awaits: start, stop, restart. */
  operations: 'operations',
  /** Outbound notification attempts (docs/notifications.md); retries are scheduled in PostgreSQL. */
  notifications: 'notifications',
  /** One-off runs (docs/jobs.md): a command may take minutes, so it never waits behind deploys. */
  runs: 'runs',
  /** Backups, restores and checks of services' volumes (docs/backups.md): long, never ahead of a stop. */
  backups: 'backups',
  /** Terminals (docs/jobs.md#terminal): each holds a slot while open, so they have their own queue and slots. */
  terminals: 'terminals',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

// Payloads carry ids only (PostgreSQL is the source of truth): nothing secret, nothing a worker
// could take on trust. Every row id is a UUID.
const RowId = Type.String({ format: 'uuid' });
const DeployPayload = Type.Object({ deploymentId: RowId }, { additionalProperties: false });
const DeletePayload = Type.Object({ serviceId: RowId }, { additionalProperties: false });
const LifecyclePayload = Type.Object(
  {
    serviceId: RowId,
    // The tuple type keeps Static<> at LifecycleAction (a plain array of literals would be never).
    action: Type.Union(
      LIFECYCLE_ACTIONS.map((action) => Type.Literal(action)) as [TLiteral<LifecycleAction>],
    ),
  },
  { additionalProperties: false },
);

// Drain/activate: the requested availability is on the node row, the job only says which node.
const NodeAvailabilityPayload = Type.Object({ nodeId: RowId }, { additionalProperties: false });

// The attempt count makes each attempt its own job: a relay or redeliver enqueuing the same
// attempt twice adds nothing, and the next attempt is never mistaken for the one already run.
const NotifyPayload = Type.Object(
  { deliveryId: RowId, attempts: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);

const RunPayload = Type.Object({ runId: RowId }, { additionalProperties: false });
const ExecPayload = Type.Object({ execSessionId: RowId }, { additionalProperties: false });
// A backup or restore run is a row first (PostgreSQL); the job names only the row.
const BackupPayload = Type.Object({ backupId: RowId }, { additionalProperties: false });
const RestorePayload = Type.Object({ restoreId: RowId }, { additionalProperties: false });

const deployJobId = (payload: Static<typeof DeployPayload>) => `deploy.${payload.deploymentId}`;
const deleteJobId = (payload: Static<typeof DeletePayload>) => `delete.${payload.serviceId}`;
const notifyJobId = (payload: Static<typeof NotifyPayload>) =>
  `notify.${payload.deliveryId}.${payload.attempts}`;

const RETRYING: DefaultJobOptions = {
  attempts: 20,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 24 * 3600 },
};

interface JobDefinition<S extends TSchema> {
  queue: QueueName;
  payload: S;
  options: DefaultJobOptions;
  /** Deterministic job id: enqueuing the same work twice is a no-op while the job is known. */
  jobId?: (payload: Static<S>) => string;
}
const define = <S extends TSchema>(definition: JobDefinition<S>) => definition;

/**
 * Every job the system runs: its queue, payload schema, options and job id. The producer validates
 * a payload before enqueuing it and the worker again before running it, so a job from an older
 * release or a hand-made one fails on its own instead of reaching a processor with the wrong shape.
 */
export const JOBS = {
  deploy: define({
    queue: QUEUES.deployments,
    payload: DeployPayload,
    options: { ...RETRYING, attempts: 5 },
    jobId: deployJobId,
  }),
  delete: define({
    queue: QUEUES.deployments,
    payload: DeletePayload,
    options: RETRYING,
    jobId: deleteJobId,
  }),
  lifecycle: define({
    queue: QUEUES.operations,
    payload: LifecyclePayload,
    options: { attempts: 1, removeOnComplete: { age: 600 }, removeOnFail: { age: 3600 } },
  }),
  'node-availability': define({
    queue: QUEUES.operations,
    payload: NodeAvailabilityPayload,
    // No deterministic id: a drain right after an activate must run again, not coalesce with it.
    options: { attempts: 3, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: { age: 600 } },
  }),
  // A run interrupted by a worker crash is run again from the start (restic's snapshots are
  // atomic: an interrupted one is never listed); the row keeps the outcome, the job goes.
  backup: define({
    queue: QUEUES.backups,
    payload: BackupPayload,
    options: { ...RETRYING, attempts: 3, removeOnComplete: true },
    jobId: (payload) => `backup.${payload.backupId}`,
  }),
  restore: define({
    queue: QUEUES.backups,
    payload: RestorePayload,
    options: { ...RETRYING, attempts: 3, removeOnComplete: true },
    jobId: (payload) => `restore.${payload.restoreId}`,
  }),
  // A repository check of one backup; the row keeps the outcome. Asked for again while queued or
  // running, the same id adds nothing.
  verify: define({
    queue: QUEUES.backups,
    payload: BackupPayload,
    options: { ...RETRYING, attempts: 3, removeOnComplete: true },
    jobId: (payload) => `verify.${payload.backupId}`,
  }),
  // One attempt per job, removed once run (PostgreSQL keeps the log): the relay re-adds the id.
  notify: define({
    queue: QUEUES.notifications,
    payload: NotifyPayload,
    options: { attempts: 1, removeOnComplete: true, removeOnFail: true },
    jobId: notifyJobId,
  }),
  // One attempt: a command is not retried (a migration run twice is not the same as once). A job
  // handed back after its worker died finds the run no longer queued and records the failure.
  run: define({
    queue: QUEUES.runs,
    payload: RunPayload,
    options: { attempts: 1, removeOnComplete: { age: 600 }, removeOnFail: { age: 3600 } },
    jobId: (payload: Static<typeof RunPayload>) => `run.${payload.runId}`,
  }),
  // One attempt: a terminal whose worker died is over (its API side sees no output and closes it).
  exec: define({
    queue: QUEUES.terminals,
    payload: ExecPayload,
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { age: 3600 } },
    jobId: (payload: Static<typeof ExecPayload>) => `exec.${payload.execSessionId}`,
  }),
};
export type JobName = keyof typeof JOBS;
export type JobPayload<N extends JobName> = Static<(typeof JOBS)[N]['payload']>;

export const JOB_NAMES = Object.keys(JOBS) as JobName[];

export const isJobName = (name: string): name is JobName => Object.hasOwn(JOBS, name);

/** The job id of a payload, for the jobs that have deterministic ids. */
export function jobIdOf<N extends JobName>(name: N, payload: JobPayload<N>): string | undefined {
  const definition: JobDefinition<TSchema> = JOBS[name];
  return definition.jobId?.(payload);
}

/** Deterministic ids of the jobs the reconciler looks up. */
export const jobIds = { deploy: deployJobId, delete: deleteJobId };

export class InvalidJobPayloadError extends Error {
  constructor(
    readonly job: string,
    readonly problems: string[],
  ) {
    super(`invalid ${job} job payload: ${problems.join('; ')}`);
    this.name = 'InvalidJobPayloadError';
  }
}

/** The payload typed for its job, or InvalidJobPayloadError naming each problem. */
export function parsePayload<N extends JobName>(name: N, payload: unknown): JobPayload<N> {
  const schema: TSchema = JOBS[name].payload;
  if (Value.Check(schema, payload)) return payload as JobPayload<N>;
  const problems = [...Value.Errors(schema, payload)].map(
    (error) => `${error.instancePath || '/'} ${error.message}`,
  );
  throw new InvalidJobPayloadError(name, problems);
}

export interface LifecycleResult {
  status: 'running' | 'stopped' | 'deploying' | 'failed';
  message: string;
}

/**
 * Lock and stall settings: a job whose worker died is handed to another within ~15 s;
 * maxStalledCount > 1 so a deploy interrupted twice is not failed for it.
 */
export const WORKER_LOCKING = { lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 5 } as const;
