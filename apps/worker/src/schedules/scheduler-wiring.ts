import type { WorkerConfig } from '@hostctl/config';
import {
  createBackupSchedulerStore,
  createBackupVerifySchedulerStore,
  createSchedulerStore,
  type Db,
} from '@hostctl/db';
import type { Producer } from '@hostctl/queue';
import type { Logger } from 'pino';
import { backupScheduleSource } from '../backups/backup-schedule-source.js';
import { verifyScheduleSource } from '../backups/verify-schedule-source.js';
import { jobScheduleSource } from './job-source.js';
import { createScheduler } from './scheduler.js';

/**
 * The scheduler of the composition root, from the worker's config: one tick fires both job
 * schedules (docs/jobs.md#schedules), backup schedules (docs/backups.md#schedules) and their
 * restore tests (docs/backups.md#verification).
 */
export function schedulerOf(
  config: Pick<WorkerConfig, 'SCHEDULER_INTERVAL_MS' | 'SCHEDULE_MISSED_GRACE_MS'>,
  deps: { db: Db; producer: Pick<Producer, 'enqueue'>; logger: Logger },
) {
  return createScheduler({
    sources: [
      jobScheduleSource({ store: createSchedulerStore(deps.db), producer: deps.producer }),
      backupScheduleSource({ store: createBackupSchedulerStore(deps.db), producer: deps.producer }),
      verifyScheduleSource({ store: createBackupVerifySchedulerStore(deps.db), producer: deps.producer }),
    ],
    intervalMs: config.SCHEDULER_INTERVAL_MS,
    missedGraceMs: config.SCHEDULE_MISSED_GRACE_MS,
    logger: deps.logger,
  });
}
