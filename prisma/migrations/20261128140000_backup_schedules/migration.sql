-- Backup schedules and retention set through the API (issue 33 item 3, docs/backups.md#schedules).
-- Expand only: a new table and a nullable column, so the previous release keeps working against
-- this schema (it never writes `missed` backups and ignores scheduled_for).
CREATE TABLE "backup_schedules" (
    "id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "cron" TEXT NOT NULL,
    "time_zone" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "keep_last" INTEGER,
    "keep_daily" INTEGER,
    "keep_weekly" INTEGER,
    "keep_monthly" INTEGER,
    "next_run_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "backup_schedules_pkey" PRIMARY KEY ("id"),
    -- The API's bounds again, so a hand-made row cannot ask restic to keep nothing.
    CONSTRAINT "backup_schedules_keep_check" CHECK (
      ("keep_last" IS NULL OR "keep_last" BETWEEN 1 AND 1000) AND
      ("keep_daily" IS NULL OR "keep_daily" BETWEEN 0 AND 1000) AND
      ("keep_weekly" IS NULL OR "keep_weekly" BETWEEN 0 AND 520) AND
      ("keep_monthly" IS NULL OR "keep_monthly" BETWEEN 0 AND 240))
);

CREATE UNIQUE INDEX "backup_schedules_service_id_key" ON "backup_schedules"("service_id");
CREATE INDEX "backup_schedules_enabled_next_run_at_idx" ON "backup_schedules"("enabled", "next_run_at");
ALTER TABLE "backup_schedules" ADD CONSTRAINT "backup_schedules_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "backups" ADD COLUMN "scheduled_for" TIMESTAMPTZ(3);
-- Exactly one backup (or one `missed` record) per scheduled time of a service: the scheduler inserts
-- with ON CONFLICT DO NOTHING, so any number of workers may tick at once. NULLs (on-demand backups)
-- are distinct.
CREATE UNIQUE INDEX "backups_service_id_scheduled_for_key" ON "backups"("service_id", "scheduled_for");

-- backup.failed, backup.missed and backup.verify_failed join the vocabulary of subscriptions
-- (docs/notifications.md#events).
ALTER TABLE "notification_subscriptions" DROP CONSTRAINT "notification_subscriptions_events_vocabulary";
ALTER TABLE "notification_subscriptions" ADD CONSTRAINT "notification_subscriptions_events_vocabulary"
  CHECK (cardinality("events") > 0 AND "events" <@ ARRAY['deployment.succeeded', 'deployment.failed',
    'deployment.rolled_back', 'service.failed', 'service.unhealthy', 'service.recovered',
    'service.deleted', 'job.failed', 'job.missed', 'backup.failed', 'backup.missed',
    'backup.verify_failed', 'certificate.renewal_failed', 'certificate.expiring',
    'usage.period_closed']::TEXT[]);
