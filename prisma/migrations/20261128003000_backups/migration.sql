-- Backups of a service's named volumes and restores of them (issue 33; docs/backups.md).
-- `customer_id` is the repository the snapshots live in (one restic repository per customer).
CREATE TABLE "backups" (
    "id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "method" TEXT NOT NULL,
    "target" TEXT NOT NULL DEFAULT 'local',
    "deployment_id" TEXT,
    "volumes" JSONB NOT NULL DEFAULT '[]',
    "size_bytes" BIGINT,
    "duration_ms" INTEGER,
    "log" TEXT NOT NULL DEFAULT '',
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "backups_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "backup_restores" (
    "id" TEXT NOT NULL,
    "backup_id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "kept_volumes" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "log" TEXT NOT NULL DEFAULT '',
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "backup_restores_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "backups_service_id_created_at_idx" ON "backups"("service_id", "created_at");
CREATE INDEX "backup_restores_backup_id_created_at_idx" ON "backup_restores"("backup_id", "created_at");
CREATE INDEX "backup_restores_service_id_created_at_idx" ON "backup_restores"("service_id", "created_at");

ALTER TABLE "backups" ADD CONSTRAINT "backups_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "backup_restores" ADD CONSTRAINT "backup_restores_backup_id_fkey" FOREIGN KEY ("backup_id") REFERENCES "backups"("id") ON DELETE CASCADE ON UPDATE CASCADE;
