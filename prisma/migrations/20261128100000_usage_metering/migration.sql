-- Usage metering (docs/metering.md). What a customer is billed for is derived from facts the
-- database already holds, not from samples a worker may miss: every span of time a service
-- holds capacity (running or deploying, not deleted) is one row of service_usage_intervals,
-- with the containers, memory and CPU its definition claims. A trigger on services keeps the
-- rows, so every writer of those columns (API, worker, CLI, a hand-written UPDATE) is covered,
-- and nothing depends on Redis or on a worker being alive at the moment of a change.

CREATE TABLE "service_usage_intervals" (
    "id" BIGSERIAL NOT NULL,
    "service_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "ended_at" TIMESTAMPTZ(3),
    "containers" INTEGER NOT NULL,
    "memory_mb" INTEGER NOT NULL,
    "millicpus" INTEGER NOT NULL,

    CONSTRAINT "service_usage_intervals_pkey" PRIMARY KEY ("id")
);
-- At most one open span per service: the trigger closes it before it opens the next.
CREATE UNIQUE INDEX "service_usage_intervals_open_key" ON "service_usage_intervals"("service_id") WHERE "ended_at" IS NULL;
CREATE INDEX "service_usage_intervals_customer_id_started_at_idx" ON "service_usage_intervals"("customer_id", "started_at");

-- One row per customer and closed hour: written once, in the transaction that writes the hour's
-- records and its usage.period_closed notifications, so a period is closed exactly once whatever
-- the number of workers closing at the same time.
CREATE TABLE "usage_periods" (
    "customer_id" TEXT NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "closed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_periods_pkey" PRIMARY KEY ("customer_id", "period_start")
);

-- What one service used in one closed hour.
CREATE TABLE "usage_records" (
    "service_id" TEXT NOT NULL,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "customer_id" TEXT NOT NULL,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "container_seconds" BIGINT NOT NULL,
    "memory_mb_seconds" BIGINT NOT NULL,
    "millicpu_seconds" BIGINT NOT NULL,
    "deploys" INTEGER NOT NULL,

    CONSTRAINT "usage_records_pkey" PRIMARY KEY ("service_id", "period_start")
);
CREATE INDEX "usage_records_customer_id_period_start_idx" ON "usage_records"("customer_id", "period_start");

-- How far every customer's hours are closed: the next hour to close starts here.
CREATE TABLE "usage_watermark" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "closed_through" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "usage_watermark_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "usage_watermark_single_row" CHECK ("id" = 1)
);

-- Hand-written: the trigger. A service holds capacity while it is not deleted and running or
-- deploying (a redeploy's previous release keeps running; a failed service runs nothing: a
-- failed redeploy that kept the previous release leaves it `running`). A span is split only
-- when that changes or when the claim does (containers, memory, CPU), so the frequent
-- telemetry and health writes to services never touch this table.
CREATE FUNCTION "services_usage_interval"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  holds_new boolean := false;
  holds_old boolean := false;
BEGIN
  IF TG_OP = 'DELETE' THEN
    UPDATE "service_usage_intervals" SET "ended_at" = now()
      WHERE "service_id" = OLD.id AND "ended_at" IS NULL;
    RETURN NULL;
  END IF;
  holds_new := NEW.deleted_at IS NULL AND NEW.status IN ('running', 'deploying');
  IF TG_OP = 'UPDATE' THEN
    holds_old := OLD.deleted_at IS NULL AND OLD.status IN ('running', 'deploying');
    IF holds_old = holds_new AND (NOT holds_new OR (
        OLD.containers = NEW.containers AND OLD.claimed_memory_mb = NEW.claimed_memory_mb
        AND OLD.claimed_millicpus = NEW.claimed_millicpus)) THEN
      RETURN NULL;
    END IF;
    IF holds_old THEN
      UPDATE "service_usage_intervals" SET "ended_at" = now()
        WHERE "service_id" = NEW.id AND "ended_at" IS NULL;
    END IF;
  END IF;
  IF holds_new THEN
    INSERT INTO "service_usage_intervals"
      ("service_id", "customer_id", "started_at", "containers", "memory_mb", "millicpus")
      VALUES (NEW.id, NEW.customer_id, now(), NEW.containers, NEW.claimed_memory_mb, NEW.claimed_millicpus);
  END IF;
  RETURN NULL;
END
$$;

-- No writes to services while the trigger is created and the open spans are filled in.
LOCK TABLE "services" IN SHARE ROW EXCLUSIVE MODE;

CREATE TRIGGER "services_usage_interval_insert" AFTER INSERT ON "services"
  FOR EACH ROW EXECUTE FUNCTION "services_usage_interval"();
CREATE TRIGGER "services_usage_interval_update"
  AFTER UPDATE OF "status", "deleted_at", "containers", "claimed_memory_mb", "claimed_millicpus" ON "services"
  FOR EACH ROW EXECUTE FUNCTION "services_usage_interval"();
-- Services are soft-deleted; a row removed outright (by hand) must not stay billed forever.
CREATE TRIGGER "services_usage_interval_delete" AFTER DELETE ON "services"
  FOR EACH ROW EXECUTE FUNCTION "services_usage_interval"();

-- Metering starts now: services holding capacity open a span at the upgrade, and the first hour
-- to close is the current one.
INSERT INTO "service_usage_intervals" ("service_id", "customer_id", "started_at", "containers", "memory_mb", "millicpus")
  SELECT "id", "customer_id", now(), "containers", "claimed_memory_mb", "claimed_millicpus"
  FROM "services" WHERE "deleted_at" IS NULL AND "status" IN ('running', 'deploying');
INSERT INTO "usage_watermark" ("id", "closed_through") VALUES (1, date_trunc('hour', now()));

-- usage.period_closed joins the vocabulary: a platform event, for the operator's customer only
-- (PLATFORM_NOTIFICATIONS_CUSTOMER_ID), as the certificate alerts are.
ALTER TABLE "notification_subscriptions" DROP CONSTRAINT "notification_subscriptions_events_vocabulary";
ALTER TABLE "notification_subscriptions" ADD CONSTRAINT "notification_subscriptions_events_vocabulary"
  CHECK (cardinality("events") > 0 AND "events" <@ ARRAY['deployment.succeeded', 'deployment.failed',
    'deployment.rolled_back', 'service.failed', 'service.unhealthy', 'service.recovered',
    'service.deleted', 'certificate.renewal_failed', 'certificate.expiring',
    'usage.period_closed']::TEXT[]);
