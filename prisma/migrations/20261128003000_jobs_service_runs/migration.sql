-- One-off runs (issue 32, docs/jobs.md): a command in a short-lived container from the service's
-- current release; status, exit code, duration and the bounded output are kept per run.
CREATE TABLE "service_runs" (
    "id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "command" TEXT[],
    "component" TEXT,
    "timeout_seconds" INTEGER NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "exit_code" INTEGER,
    "output" TEXT NOT NULL DEFAULT '',
    "output_truncated" BOOLEAN NOT NULL DEFAULT false,
    "error" TEXT,
    "deployment_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "service_runs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "service_runs_status_check"
      CHECK ("status" IN ('queued', 'running', 'succeeded', 'failed', 'timed_out'))
);

CREATE INDEX "service_runs_service_id_created_at_idx" ON "service_runs"("service_id", "created_at");

ALTER TABLE "service_runs" ADD CONSTRAINT "service_runs_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;
