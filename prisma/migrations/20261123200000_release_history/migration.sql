-- Releases (issue 14): a deployment records what it ran so that a rollback can run exactly that
-- again, and how it ended when a cutover was undone.
-- PostgreSQL 12+ accepts ADD VALUE inside the migrator's transaction; nothing below uses the value.
ALTER TYPE "DeploymentStatus" ADD VALUE IF NOT EXISTS 'rolled_back';

ALTER TABLE "deployments"
  -- The deployment whose release a `rollback` deployment runs again.
  ADD COLUMN "rollback_of" TEXT,
  -- {"<component>": "<image reference pinned to what ran: repo@sha256:… or the local image id>"}
  ADD COLUMN "image_digests" JSONB,
  -- start-first | stop-first: the update order the cutover used.
  ADD COLUMN "update_order" TEXT,
  -- The service's compose document and variables when the deployment was requested, so that a
  -- rollback can set them back (the next redeploy must not bring a bad change back).
  ADD COLUMN "source_compose" TEXT,
  ADD COLUMN "source_variables" JSONB;

ALTER TABLE "deployments" ADD CONSTRAINT "deployments_rollback_of_fkey"
  FOREIGN KEY ("rollback_of") REFERENCES "deployments"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- History pages and "the last successful release" per service.
CREATE INDEX "deployments_service_id_status_created_at_idx"
  ON "deployments"("service_id", "status", "created_at");
