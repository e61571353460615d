-- Scheduled restore tests (issue 33 item 5, docs/backups.md#verification): a second cron on the
-- backup schedule, read in its time zone and ticked by the same scheduler, with its own cursor.
-- Expand only: nullable columns, so the previous release keeps working against this schema (it
-- never reads them and takes no scheduled check).
ALTER TABLE "backup_schedules" ADD COLUMN "verify_cron" TEXT;
ALTER TABLE "backup_schedules" ADD COLUMN "verify_next_run_at" TIMESTAMPTZ(3);

-- The scheduler's pass reads the schedules whose check is due, as it reads the backup times.
CREATE INDEX "backup_schedules_enabled_verify_next_run_at_idx" ON "backup_schedules"("enabled", "verify_next_run_at");

-- Each scheduler pass hands checks still `queued` to the queue again (a lost enqueue): a partial
-- index keeps that read to the few queued rows, not the whole backups table.
CREATE INDEX "backups_verify_queued_idx" ON "backups"("id") WHERE "verify_status" = 'queued';
