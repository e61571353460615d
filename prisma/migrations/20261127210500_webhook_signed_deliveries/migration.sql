-- Push webhook replays (issue 27 class 2, docs/webhooks.md): deliveries are deduplicated on what
-- they signed, in a table only deliveries whose signature held can fill.

CREATE TABLE "webhook_signed_deliveries" (
    "service_id" TEXT NOT NULL,
    "body_digest" TEXT NOT NULL,
    "hook_id" TEXT NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deployment_id" TEXT,

    CONSTRAINT "webhook_signed_deliveries_pkey" PRIMARY KEY ("service_id","body_digest")
);

CREATE INDEX "webhook_signed_deliveries_service_id_received_at_idx" ON "webhook_signed_deliveries"("service_id", "received_at");

ALTER TABLE "webhook_signed_deliveries" ADD CONSTRAINT "webhook_signed_deliveries_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written below: what Prisma cannot express.

-- The delivery id header is not signed: a replay under a new id must not pass as a new delivery,
-- so the id no longer decides anything (webhook_signed_deliveries does).
DROP INDEX "webhook_deliveries_deployed_once";
