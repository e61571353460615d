-- Loud renewal failures (issue 34, docs/tls.md#alerts): what the worker already announced, so
-- every replica's round sends each alert once. failure_notified_at: the current failure streak's
-- certificate.renewal_failed went out (cleared by the next success). expiring_notified_for: the
-- not_after whose certificate.expiring went out (a new certificate has another not_after).
ALTER TABLE "tls_certificates"
    ADD COLUMN "failure_notified_at" TIMESTAMPTZ(3),
    ADD COLUMN "expiring_notified_for" TIMESTAMPTZ(3);

-- The platform's events join the vocabulary; the API lets only the operator's customer
-- (PLATFORM_NOTIFICATIONS_CUSTOMER_ID) subscribe to them (docs/notifications.md#platform-events).
ALTER TABLE "notification_subscriptions" DROP CONSTRAINT "notification_subscriptions_events_vocabulary";
ALTER TABLE "notification_subscriptions" ADD CONSTRAINT "notification_subscriptions_events_vocabulary"
  CHECK (cardinality("events") > 0 AND "events" <@ ARRAY['deployment.succeeded', 'deployment.failed',
    'deployment.rolled_back', 'service.failed', 'service.unhealthy', 'service.recovered',
    'service.deleted', 'certificate.renewal_failed', 'certificate.expiring']::TEXT[]);
