import type { CustomerScope } from '@hostctl/auth-policy';
import type { Db } from '../client.js';
import type { ServiceRun } from '../generated/client.ts';
import { customerWhere } from './scope-where.js';

export type RunsStore = ReturnType<typeof createRunsStore>;
export type { ServiceRun };

/**
 * `missed`, `skipped` and `cancelled` are scheduled runs only (docs/jobs.md#schedules): a time no
 * worker ran within the grace, a time the overlap policy `forbid` left out, a run `replace` stopped.
 */
export const RUN_STATUSES = [
  'queued',
  'running',
  'succeeded',
  'failed',
  'timed_out',
  'missed',
  'skipped',
  'cancelled',
] as const;
export const ACTIVE_RUN_STATUSES = ['queued', 'running'];
export const isFinalRun = (status: string): boolean => !ACTIVE_RUN_STATUSES.includes(status);

/** What a history page shows of a run: everything but its output. */
const SUMMARY_COLUMNS = {
  id: true,
  serviceId: true,
  command: true,
  component: true,
  timeoutSeconds: true,
  status: true,
  exitCode: true,
  outputTruncated: true,
  error: true,
  deploymentId: true,
  createdAt: true,
  startedAt: true,
  finishedAt: true,
  scheduleId: true,
  scheduledFor: true,
  attempt: true,
} as const;
export type RunSummaryRow = Pick<ServiceRun, keyof typeof SUMMARY_COLUMNS>;

interface Page {
  page: number;
  perPage: number;
}

export interface RunOutcome {
  status: 'succeeded' | 'failed' | 'timed_out';
  exitCode: number | null;
  output: string;
  outputTruncated: boolean;
  error: string | null;
}

/**
 * One-off runs (docs/jobs.md). Reads that return a run take a CustomerScope: a run is found only
 * through a service the caller may see, so another customer's run is simply not found. The worker's
 * writes (start, finish) go by id: its job payload carries nothing else.
 */
export function createRunsStore(db: Db) {
  async function listPage(
    where: { serviceId: string } | { scheduleId: string },
    page: Page,
  ): Promise<{ rows: RunSummaryRow[]; total: number }> {
    const [rows, total] = await Promise.all([
      db.serviceRun.findMany({
        where,
        select: SUMMARY_COLUMNS,
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        skip: (page.page - 1) * page.perPage,
        take: page.perPage,
      }),
      db.serviceRun.count({ where }),
    ]);
    return { rows, total };
  }

  return {
    /** The service's current release (its latest succeeded deployment) and the plan it ran. */
    async currentRelease(serviceId: string): Promise<{ id: string; plan: unknown } | null> {
      return db.deployment.findFirst({
        where: { serviceId, status: 'succeeded' },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        select: { id: true, plan: true },
      });
    },

    create(input: {
      serviceId: string;
      command: string[];
      component: string | null;
      timeoutSeconds: number;
      deploymentId: string | null;
      /** A schedule's "run now": a run of the schedule with no scheduled time. */
      scheduleId?: string;
    }): Promise<ServiceRun> {
      return db.serviceRun.create({ data: input });
    },

    async findVisible(scope: CustomerScope, id: string): Promise<ServiceRun | null> {
      const tenant = customerWhere(scope);
      if (tenant === null) return null;
      return db.serviceRun.findFirst({ where: { id, service: { ...tenant, deletedAt: null } } });
    },

    /** A page of the service's runs, newest first; the caller has checked the service is visible. */
    listForService(serviceId: string, page: Page): Promise<{ rows: RunSummaryRow[]; total: number }> {
      return listPage({ serviceId }, page);
    },

    /** A page of one schedule's runs (and missed times), newest first; the caller checked the schedule. */
    listForSchedule(scheduleId: string, page: Page): Promise<{ rows: RunSummaryRow[]; total: number }> {
      return listPage({ scheduleId }, page);
    },

    /** Worker: the run by id (with its service's id), whatever its state. */
    findById(id: string): Promise<ServiceRun | null> {
      return db.serviceRun.findUnique({ where: { id } });
    },

    /**
     * Worker: queued → running, from the release that serves now (`deploymentId`). False when the run is no longer queued: a job handed back after
     * its worker died must not run the command a second time (a migration is not idempotent).
     */
    async start(id: string, deploymentId: string): Promise<boolean> {
      const { count } = await db.serviceRun.updateMany({
        where: { id, status: 'queued' },
        data: { status: 'running', startedAt: new Date(), deploymentId },
      });
      return count === 1;
    },

    /** Worker: the final state; only a run that is not final yet changes. */
    async finish(id: string, outcome: RunOutcome): Promise<void> {
      await db.serviceRun.updateMany({
        where: { id, status: { in: ['queued', 'running'] } },
        data: { ...outcome, finishedAt: new Date() },
      });
    },
  };
}
