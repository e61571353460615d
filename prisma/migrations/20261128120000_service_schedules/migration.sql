-- Scheduled jobs (issue 32, docs/jobs.md#schedules). Expand only: a new table and nullable or
-- defaulted columns, so the previous release keeps working against this schema (it never writes
-- the new statuses; it may show a scheduled run in a service's run history).
CREATE TABLE "service_schedules" (
    "id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "cron" TEXT NOT NULL,
    "time_zone" TEXT NOT NULL,
    "command" TEXT[],
    "component" TEXT,
    "timeout_seconds" INTEGER NOT NULL,
    "retries" INTEGER NOT NULL DEFAULT 0,
    "overlap_policy" TEXT NOT NULL DEFAULT 'forbid',
    "catch_up" TEXT NOT NULL DEFAULT 'one',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "next_run_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "service_schedules_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "service_schedules_overlap_policy_check" CHECK ("overlap_policy" IN ('forbid', 'replace', 'allow')),
    CONSTRAINT "service_schedules_catch_up_check" CHECK ("catch_up" IN ('one', 'none'))
);

CREATE UNIQUE INDEX "service_schedules_service_id_name_key" ON "service_schedules"("service_id", "name");
CREATE INDEX "service_schedules_enabled_next_run_at_idx" ON "service_schedules"("enabled", "next_run_at");
ALTER TABLE "service_schedules" ADD CONSTRAINT "service_schedules_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "service_runs" ADD COLUMN "schedule_id" TEXT;
ALTER TABLE "service_runs" ADD COLUMN "scheduled_for" TIMESTAMPTZ(3);
ALTER TABLE "service_runs" ADD COLUMN "attempt" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "service_runs" ADD COLUMN "followed_up_at" TIMESTAMPTZ(3);
ALTER TABLE "service_runs" ADD CONSTRAINT "service_runs_schedule_id_fkey" FOREIGN KEY ("schedule_id") REFERENCES "service_schedules"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Exactly one run (or one missed/skipped record) per scheduled time and attempt: the scheduler
-- inserts with ON CONFLICT DO NOTHING, so any number of workers may tick at once.
CREATE UNIQUE INDEX "service_runs_schedule_time_key" ON "service_runs"("schedule_id", "scheduled_for", "attempt");
CREATE INDEX "service_runs_schedule_id_created_at_idx" ON "service_runs"("schedule_id", "created_at");

-- A scheduled time may be recorded without running (missed, skipped) and a replaced run is cancelled.
ALTER TABLE "service_runs" DROP CONSTRAINT "service_runs_status_check";
ALTER TABLE "service_runs" ADD CONSTRAINT "service_runs_status_check"
  CHECK ("status" IN ('queued', 'running', 'succeeded', 'failed', 'timed_out', 'missed', 'skipped', 'cancelled'));

-- job.failed and job.missed join the vocabulary of subscriptions (docs/notifications.md#events).
ALTER TABLE "notification_subscriptions" DROP CONSTRAINT "notification_subscriptions_events_vocabulary";
ALTER TABLE "notification_subscriptions" ADD CONSTRAINT "notification_subscriptions_events_vocabulary"
  CHECK (cardinality("events") > 0 AND "events" <@ ARRAY['deployment.succeeded', 'deployment.failed',
    'deployment.rolled_back', 'service.failed', 'service.unhealthy', 'service.recovered',
    'service.deleted', 'job.failed', 'job.missed', 'certificate.renewal_failed',
    'certificate.expiring', 'usage.period_closed']::TEXT[]);
