-- Quotas of API keys and push webhooks, and over-quota notifications (issue 31, docs/quotas.md).
-- The default plan names the two new quotas; a value an admin already set is kept. 100 API keys
-- is the per-user cap that existed before, now per customer; webhooks were one per service and
-- stay unlimited per customer.
UPDATE "quota_plans" SET "limits" = '{"api_keys": 100, "webhooks": null}'::jsonb || "limits",
  "updated_at" = CURRENT_TIMESTAMP
WHERE "name" = 'default';

-- A customer's usage found above a quota (docs/quotas.md#over-quota-notification): one row per
-- quota for as long as the streak lasts. The row is inserted with the quota.exceeded notification
-- in one transaction, and deleted once usage is back within the limit, so each streak notifies
-- once however many sweeps and workers see it.
CREATE TABLE "quota_alerts" (
    "customer_id" TEXT NOT NULL,
    "quota" TEXT NOT NULL,
    "since" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "limit" DOUBLE PRECISION NOT NULL,
    "usage" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "quota_alerts_pkey" PRIMARY KEY ("customer_id", "quota")
);

ALTER TABLE "quota_alerts" ADD CONSTRAINT "quota_alerts_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- quota.exceeded joins the vocabulary of subscriptions (docs/notifications.md#events).
ALTER TABLE "notification_subscriptions" DROP CONSTRAINT "notification_subscriptions_events_vocabulary";
ALTER TABLE "notification_subscriptions" ADD CONSTRAINT "notification_subscriptions_events_vocabulary"
  CHECK (cardinality("events") > 0 AND "events" <@ ARRAY['deployment.succeeded', 'deployment.failed',
    'deployment.rolled_back', 'service.failed', 'service.unhealthy', 'service.recovered',
    'service.deleted', 'job.failed', 'job.missed', 'backup.failed', 'backup.missed',
    'backup.verify_failed', 'quota.exceeded', 'certificate.renewal_failed', 'certificate.expiring',
    'usage.period_closed']::TEXT[]);
