import { setTimeout as sleep } from 'node:timers/promises';
import { customerScope, type Principal } from '@hostctl/auth-policy';
import { DomainError, validationError } from '@hostctl/domain';
import {
  isFinalRun,
  type RunsStore,
  type RunSummaryRow,
  type ServicesStore,
  type ServiceRun,
  type ServiceSchedule,
} from '@hostctl/db';
import { RUN_LIMITS, type Run, type RunList, type RunRequest, type RunSummary } from './runs.schemas.js';

/** How often a `?wait=N` read looks at the run again. */
const WAIT_POLL_MS = 500;

export type RunsService = ReturnType<typeof createRunsService>;

/**
 * One-off runs (docs/jobs.md): recorded in PostgreSQL, then handed to a worker, which runs the
 * command in a short-lived container from the service's current release. A run is reached only
 * through a service the caller may see: another customer's run or service is a 404.
 */
export function createRunsService(deps: {
  runs: RunsStore;
  services: Pick<ServicesStore, 'findById'>;
  enqueueRun: (runId: string) => Promise<void>;
}) {
  const { runs } = deps;

  async function serviceOr404(principal: Principal, serviceId: string): Promise<void> {
    if (!(await deps.services.findById(customerScope(principal), serviceId)))
      throw new DomainError('not_found', `service ${serviceId} not found`);
  }

  async function visibleOr404(principal: Principal, id: string): Promise<ServiceRun> {
    const found = await runs.findVisible(customerScope(principal), id);
    if (!found) throw new DomainError('not_found', `run ${id} not found`);
    return found;
  }

  /** Records the run from the service's current release, then hands it to a worker. */
  async function record(
    serviceId: string,
    input: { command: string[]; component: string | null; timeoutSeconds: number; scheduleId?: string },
    componentField: string,
  ): Promise<Run> {
    const release = await runs.currentRelease(serviceId);
    const components = componentsOf(release?.plan);
    if (!release || components.length === 0)
      throw new DomainError(
        'conflict',
        `service ${serviceId} has no release to run from yet; a run starts once a deployment has succeeded`,
      );
    if (input.component !== null && !components.includes(input.component))
      throw validationError(
        componentField,
        `no component named ${JSON.stringify(input.component)} in the current release (${components.join(', ')})`,
      );
    const run = await runs.create({ serviceId, ...input, deploymentId: release.id });
    try {
      await deps.enqueueRun(run.id);
    } catch (error) {
      // Unlike a deploy, nothing re-enqueues a run later: it fails now, visibly, and the caller retries.
      await runs.finish(run.id, {
        status: 'failed',
        exitCode: null,
        output: '',
        outputTruncated: false,
        error: 'the job queue was unavailable; the command did not run',
      });
      throw new DomainError('dependency_unavailable', 'the job queue is unavailable; retry shortly', {
        headers: { 'retry-after': '5' },
        cause: error,
      });
    }
    return toRun(run);
  }

  return {
    async create(principal: Principal, serviceId: string, body: RunRequest): Promise<Run> {
      await serviceOr404(principal, serviceId);
      checkCommand(body.command, '/body/command');
      return record(
        serviceId,
        {
          command: body.command,
          component: body.component ?? null,
          timeoutSeconds: body.timeout ?? RUN_LIMITS.timeoutDefaultSeconds,
        },
        '/body/component',
      );
    },

    /** A schedule's "run now": a run of the schedule, now; the caller has checked the schedule is visible. */
    runSchedule(schedule: ServiceSchedule): Promise<Run> {
      return record(
        schedule.serviceId,
        {
          command: schedule.command,
          component: schedule.component,
          timeoutSeconds: schedule.timeoutSeconds,
          scheduleId: schedule.id,
        },
        'component',
      );
    },

    /** A page of a schedule's runs and recorded times; the caller has checked the schedule is visible. */
    async scheduleHistory(scheduleId: string, page: { page: number; perPage: number }): Promise<RunList> {
      const { rows, total } = await runs.listForSchedule(scheduleId, page);
      return { data: rows.map(toSummary), total, page: page.page, per_page: page.perPage };
    },

    /** The run with its output; with waitSeconds, answers once it is final or the wait ends. */
    async get(
      principal: Principal,
      id: string,
      options: { waitSeconds?: number; signal?: AbortSignal },
    ): Promise<Run> {
      let run = await visibleOr404(principal, id);
      const deadline = Date.now() + (options.waitSeconds ?? 0) * 1000;
      while (!isFinalRun(run.status) && Date.now() < deadline && !options.signal?.aborted) {
        await sleep(Math.min(WAIT_POLL_MS, deadline - Date.now()), undefined, {
          ...(options.signal ? { signal: options.signal } : {}),
        }).catch(() => undefined);
        run = await visibleOr404(principal, id);
      }
      return toRun(run);
    },

    /** A page of the service's runs, newest first, without their output. */
    async history(
      principal: Principal,
      serviceId: string,
      page: { page: number; perPage: number },
    ): Promise<RunList> {
      await serviceOr404(principal, serviceId);
      const { rows, total } = await runs.listForService(serviceId, page);
      return { data: rows.map(toSummary), total, page: page.page, per_page: page.perPage };
    },
  };
}

/** The schema bounds each argument and their number; the whole argv is bounded here. */
export function checkCommand(command: string[], field: string): void {
  if ((command[0] ?? '').trim() === '')
    throw validationError(field, 'the first element names the program to run and cannot be empty');
  const bytes = command.reduce((sum, arg) => sum + Buffer.byteLength(arg), 0);
  if (bytes > RUN_LIMITS.commandMaxBytes)
    throw validationError(
      field,
      `the command is ${bytes} bytes; at most ${RUN_LIMITS.commandMaxBytes} (pass larger input through a file or variable)`,
    );
}

/** The component names of a stored plan (older or foreign shapes: none). */
export function componentsOf(plan: unknown): string[] {
  const containers = (plan as { containers?: unknown } | null)?.containers;
  if (!Array.isArray(containers)) return [];
  return containers
    .map((container) => (container as { name?: unknown }).name)
    .filter((name): name is string => typeof name === 'string');
}

function toSummary(row: RunSummaryRow): RunSummary {
  return {
    id: row.id,
    service_id: row.serviceId,
    command: row.command,
    component: row.component,
    timeout: row.timeoutSeconds,
    status: row.status as RunSummary['status'],
    exit_code: row.exitCode,
    duration_ms: row.startedAt && row.finishedAt ? row.finishedAt.getTime() - row.startedAt.getTime() : null,
    output_truncated: row.outputTruncated,
    error: row.error,
    deployment_id: row.deploymentId,
    created_at: row.createdAt.toISOString(),
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
    schedule_id: row.scheduleId,
    scheduled_for: row.scheduledFor?.toISOString() ?? null,
    attempt: row.attempt,
  };
}

function toRun(row: ServiceRun): Run {
  return { ...toSummary(row), output: row.output };
}
