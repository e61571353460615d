-- One attempt per delivery at a time, throttled redelivery and a per-customer share of the sender
-- (issue 27, class 4; docs/notifications.md#fairness). `in_flight_until` is the lease of the attempt
-- being sent (NULL when none): redeliver refuses while it runs, and the worker counts a customer's
-- leases before it claims another. `redelivered_at` spaces one delivery's redeliveries and bounds a
-- customer's redeliveries per minute.
ALTER TABLE "notification_deliveries" ADD COLUMN "in_flight_until" TIMESTAMPTZ(3),
ADD COLUMN "redelivered_at" TIMESTAMPTZ(3);

-- Hand-written: both are counted per customer on every claim and every redeliver, and nearly every
-- row has them NULL.
CREATE INDEX "notification_deliveries_in_flight_idx" ON "notification_deliveries" ("subscription_id")
  WHERE "in_flight_until" IS NOT NULL;
CREATE INDEX "notification_deliveries_redelivered_idx" ON "notification_deliveries" ("redelivered_at")
  WHERE "redelivered_at" IS NOT NULL;
