-- contract: only the CHECK is replaced, by a wider one: every event the previous release stores
-- (its vocabulary is a subset of this one) still passes, so its API and workers are unaffected.
-- service.memory_high and service.restart_loop join the vocabulary of subscriptions
-- (docs/notifications.md#threshold-alerts). Kept apart from the tables of the resource history so
-- the upgrade guard still checks that migration.
ALTER TABLE "notification_subscriptions" DROP CONSTRAINT "notification_subscriptions_events_vocabulary";
ALTER TABLE "notification_subscriptions" ADD CONSTRAINT "notification_subscriptions_events_vocabulary"
  CHECK (cardinality("events") > 0 AND "events" <@ ARRAY['deployment.succeeded', 'deployment.failed',
    'deployment.rolled_back', 'service.failed', 'service.unhealthy', 'service.recovered',
    'service.deleted', 'service.memory_high', 'service.restart_loop', 'job.failed', 'job.missed',
    'backup.failed', 'backup.missed', 'backup.verify_failed', 'quota.exceeded',
    'certificate.renewal_failed', 'certificate.expiring', 'usage.period_closed']::TEXT[]);
