-- Outbound notifications (issue 15 part 4, docs/notifications.md): per-customer subscriptions and
-- the outbox of their deliveries.

CREATE TABLE "notification_subscriptions" (
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[] NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "description" TEXT NOT NULL DEFAULT '',
    "secret" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "notification_subscriptions_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "notification_subscriptions_customer_id_idx" ON "notification_subscriptions"("customer_id");

ALTER TABLE "notification_subscriptions" ADD CONSTRAINT "notification_subscriptions_customer_id_fkey"
  FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The outbox: one row per (event, subscription), inserted in the transaction of the state change.
-- The body is frozen at emission, so every attempt and a redelivery send the same document.
CREATE TABLE "notification_deliveries" (
    "id" TEXT NOT NULL,
    "subscription_id" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "body" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3),
    "last_attempt_at" TIMESTAMPTZ(3),
    "last_status_code" INTEGER,
    "last_error" TEXT,
    "last_response" TEXT,
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "notification_deliveries_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "notification_deliveries_subscription_id_created_at_idx"
  ON "notification_deliveries"("subscription_id", "created_at");

ALTER TABLE "notification_deliveries" ADD CONSTRAINT "notification_deliveries_subscription_id_fkey"
  FOREIGN KEY ("subscription_id") REFERENCES "notification_subscriptions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written below: what Prisma cannot express.

ALTER TABLE "notification_subscriptions" ADD CONSTRAINT "notification_subscriptions_events_vocabulary"
  CHECK (cardinality("events") > 0 AND "events" <@ ARRAY['deployment.succeeded', 'deployment.failed',
    'deployment.rolled_back', 'service.failed', 'service.unhealthy', 'service.recovered',
    'service.deleted']::TEXT[]);
ALTER TABLE "notification_deliveries" ADD CONSTRAINT "notification_deliveries_status_vocabulary"
  CHECK ("status" IN ('pending', 'delivered', 'failed'));
-- Pending rows and only those have a next attempt: the relay's query relies on it.
ALTER TABLE "notification_deliveries" ADD CONSTRAINT "notification_deliveries_pending_has_next"
  CHECK (("status" = 'pending') = ("next_attempt_at" IS NOT NULL));

-- The relay's poll: due pending deliveries, oldest first, without scanning delivered history.
CREATE INDEX "notification_deliveries_due_idx" ON "notification_deliveries"("next_attempt_at")
  WHERE "status" = 'pending';
