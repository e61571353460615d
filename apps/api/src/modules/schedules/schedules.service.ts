import { customerScope, type Principal } from '@hostctl/auth-policy';
import { cronProblem, nextTime } from '@hostctl/cron';
import { DomainError, LIMITS, validationError } from '@hostctl/domain';
import type {
  RunsStore,
  ScheduleFields,
  ScheduleLastRun,
  SchedulesStore,
  ServicesStore,
  ServiceSchedule,
} from '@hostctl/db';
import { checkCommand, componentsOf, type RunsService } from '../runs/runs.service.js';
import { RUN_LIMITS, type Run, type RunList } from '../runs/runs.schemas.js';
import type { Schedule, ScheduleCreate, ScheduleList, SchedulePatch } from './schedules.schemas.js';

export type SchedulesService = ReturnType<typeof createSchedulesService>;

/**
 * Scheduled jobs (docs/jobs.md#schedules): the API validates and stores a schedule with the cursor
 * of its next time; the workers' scheduler turns the times into runs. A schedule is reached only
 * through a service the caller may see: another customer's schedule or service is a 404.
 */
export function createSchedulesService(deps: {
  schedules: SchedulesStore;
  services: Pick<ServicesStore, 'findById'>;
  runs: Pick<RunsStore, 'currentRelease'>;
  runsService: Pick<RunsService, 'runSchedule' | 'scheduleHistory'>;
  /** SCHEDULE_MIN_INTERVAL_SECONDS. */
  minIntervalSeconds: number;
  now?: () => Date;
}) {
  const { schedules } = deps;
  const now = deps.now ?? (() => new Date());

  async function serviceOr404(principal: Principal, serviceId: string): Promise<void> {
    if (!(await deps.services.findById(customerScope(principal), serviceId)))
      throw new DomainError('not_found', `service ${serviceId} not found`);
  }

  async function visibleOr404(principal: Principal, id: string): Promise<ServiceSchedule> {
    const found = await schedules.findVisible(customerScope(principal), id);
    if (!found) throw new DomainError('not_found', `schedule ${id} not found`);
    return found;
  }

  /** The checks the schema cannot make; throws a problem naming the field. */
  async function check(serviceId: string, schedule: Omit<ScheduleFields, 'nextRunAt'>): Promise<Date> {
    checkCommand(schedule.command, '/body/command');
    const problem = cronProblem(schedule, deps.minIntervalSeconds, now());
    if (problem) throw validationError(`/body/${problem.field}`, problem.message);
    if (schedule.component !== null) {
      // Before the first release any name passes; the run then fails naming the component.
      const components = componentsOf((await deps.runs.currentRelease(serviceId))?.plan);
      if (components.length > 0 && !components.includes(schedule.component))
        throw validationError(
          '/body/component',
          `no component named ${JSON.stringify(schedule.component)} in the current release (${components.join(', ')})`,
        );
    }
    const next = nextTime(schedule, now());
    if (!next) throw validationError('/body/cron', 'the expression never matches a time again');
    return next;
  }

  return {
    async list(principal: Principal, serviceId: string): Promise<ScheduleList> {
      await serviceOr404(principal, serviceId);
      const rows = await schedules.listForService(serviceId);
      // Every schedule's last record in one statement, not one per row.
      const last = await schedules.lastRuns(rows.map((row) => row.id));
      return { data: rows.map((row) => toSchedule(row, last.get(row.id))) };
    },

    async create(principal: Principal, serviceId: string, body: ScheduleCreate): Promise<Schedule> {
      await serviceOr404(principal, serviceId);
      const fields = {
        name: body.name,
        cron: body.cron,
        timeZone: body.time_zone ?? 'UTC',
        command: body.command,
        component: body.component ?? null,
        timeoutSeconds: body.timeout ?? RUN_LIMITS.timeoutDefaultSeconds,
        retries: body.retries ?? 0,
        overlapPolicy: body.overlap_policy ?? 'forbid',
        catchUp: body.catch_up ?? 'one',
        enabled: body.enabled ?? true,
      };
      const nextRunAt = await check(serviceId, fields);
      const created = await schedules.createWithinLimit(
        serviceId,
        { ...fields, nextRunAt },
        LIMITS.schedulesPerService,
      );
      if (created === 'limit_reached')
        throw new DomainError(
          'conflict',
          `service ${serviceId} has ${LIMITS.schedulesPerService} schedules already, the most one service may have; delete one first`,
        );
      if (created === 'name_taken') throw nameTaken(body.name);
      return toSchedule(created, undefined);
    },

    async get(principal: Principal, id: string): Promise<Schedule> {
      const schedule = await visibleOr404(principal, id);
      return toSchedule(schedule, (await schedules.lastRuns([id])).get(id));
    },

    async update(principal: Principal, id: string, body: SchedulePatch): Promise<Schedule> {
      const current = await visibleOr404(principal, id);
      const merged = {
        name: body.name ?? current.name,
        cron: body.cron ?? current.cron,
        timeZone: body.time_zone ?? current.timeZone,
        command: body.command ?? current.command,
        component: body.component === undefined ? current.component : body.component,
        timeoutSeconds: body.timeout ?? current.timeoutSeconds,
        retries: body.retries ?? current.retries,
        overlapPolicy: body.overlap_policy ?? (current.overlapPolicy as ScheduleFields['overlapPolicy']),
        catchUp: body.catch_up ?? (current.catchUp as ScheduleFields['catchUp']),
        enabled: body.enabled ?? current.enabled,
      };
      const next = await check(current.serviceId, merged);
      // A new expression, or enabling again, starts from now: times while disabled are not missed.
      const restarts =
        merged.cron !== current.cron ||
        merged.timeZone !== current.timeZone ||
        (merged.enabled && !current.enabled);
      const updated = await schedules.update(id, { ...merged, ...(restarts ? { nextRunAt: next } : {}) });
      if (updated === 'name_taken') throw nameTaken(merged.name);
      return toSchedule(updated, (await schedules.lastRuns([id])).get(id));
    },

    async remove(principal: Principal, id: string): Promise<void> {
      await visibleOr404(principal, id);
      await schedules.remove(id);
    },

    /** Runs the schedule's command once, now, whatever its times and `enabled`. */
    async runNow(principal: Principal, id: string): Promise<Run> {
      return deps.runsService.runSchedule(await visibleOr404(principal, id));
    },

    async runs(principal: Principal, id: string, page: { page: number; perPage: number }): Promise<RunList> {
      const schedule = await visibleOr404(principal, id);
      return deps.runsService.scheduleHistory(schedule.id, page);
    },
  };
}

function nameTaken(name: string): DomainError {
  return new DomainError('name_taken', `the service has a schedule named ${name} already`, {
    errors: [{ path: '/body/name', message: 'taken' }],
  });
}

function toSchedule(row: ServiceSchedule, last: ScheduleLastRun | undefined): Schedule {
  return {
    id: row.id,
    service_id: row.serviceId,
    name: row.name,
    cron: row.cron,
    time_zone: row.timeZone,
    command: row.command,
    component: row.component,
    timeout: row.timeoutSeconds,
    retries: row.retries,
    overlap_policy: row.overlapPolicy as Schedule['overlap_policy'],
    catch_up: row.catchUp as Schedule['catch_up'],
    enabled: row.enabled,
    next_run_at: row.enabled ? row.nextRunAt.toISOString() : null,
    last_run: last ? toLastRun(last) : null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function toLastRun(run: ScheduleLastRun): NonNullable<Schedule['last_run']> {
  return {
    id: run.id,
    status: run.status as NonNullable<Schedule['last_run']>['status'],
    exit_code: run.exitCode,
    duration_ms: run.startedAt && run.finishedAt ? run.finishedAt.getTime() - run.startedAt.getTime() : null,
    scheduled_for: run.scheduledFor?.toISOString() ?? null,
    created_at: run.createdAt.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
  };
}
