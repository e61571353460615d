-- Push webhooks (issue 15 part 3, docs/webhooks.md).

-- A redeploy may name the commit it must run (a push delivery); the worker checks out exactly it.
ALTER TABLE "deployments" ADD COLUMN "requested_commit" TEXT;

-- The push hook that made an audited request (actor_type 'webhook').
ALTER TABLE "audit_events" ADD COLUMN "actor_webhook_id" TEXT;

CREATE TABLE "service_webhooks" (
    "id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "service_webhooks_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "service_webhooks_service_id_key" ON "service_webhooks"("service_id");

ALTER TABLE "service_webhooks" ADD CONSTRAINT "service_webhooks_service_id_fkey"
  FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "webhook_deliveries" (
    "id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "hook_id" TEXT NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "provider" TEXT NOT NULL,
    "event" TEXT,
    "provider_delivery_id" TEXT,
    "branch" TEXT,
    "commit" TEXT,
    "outcome" TEXT NOT NULL,
    "status_code" INTEGER NOT NULL,
    "reason" TEXT,
    "deployment_id" TEXT,
    "source_address" TEXT NOT NULL,

    CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "webhook_deliveries_service_id_received_at_idx" ON "webhook_deliveries"("service_id", "received_at");

ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_service_id_fkey"
  FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written below: what Prisma cannot express.

ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_outcome_vocabulary"
  CHECK ("outcome" IN ('deployed', 'ignored', 'rejected'));

-- A provider's redelivery (same delivery id) of a push that deployed finds the first one here;
-- the insert of the first is in the redeploy's transaction, so two racing copies deploy once.
CREATE UNIQUE INDEX "webhook_deliveries_deployed_once"
  ON "webhook_deliveries"("service_id", "provider", "provider_delivery_id")
  WHERE "outcome" = 'deployed' AND "provider_delivery_id" IS NOT NULL;
