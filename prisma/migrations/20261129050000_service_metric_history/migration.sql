-- Resource history (docs/health-and-resources.md#history): per-service buckets of the sampler's
-- samples, and the open streaks of the threshold alerts. Additive: the previous release never
-- reads or writes these tables.
CREATE TABLE "service_metric_buckets" (
    "service_id" TEXT NOT NULL,
    "width_s" INTEGER NOT NULL,
    "bucket_start" TIMESTAMPTZ(3) NOT NULL,
    "samples" INTEGER NOT NULL,
    "cpu_sum" REAL NOT NULL,
    "cpu_max" REAL NOT NULL,
    "memory_sum_mb" REAL NOT NULL,
    "memory_max_mb" REAL NOT NULL,
    "memory_limit_mb" REAL NOT NULL,
    "network_rx_bytes" BIGINT NOT NULL,
    "network_tx_bytes" BIGINT NOT NULL,
    "restarts" INTEGER NOT NULL,
    "oom_kills" INTEGER NOT NULL,
    "last_sample_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "service_metric_buckets_pkey" PRIMARY KEY ("service_id","width_s","bucket_start")
);

CREATE TABLE "service_alerts" (
    "service_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "streak" INTEGER NOT NULL DEFAULT 1,
    "since" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "notified_at" TIMESTAMPTZ(3),

    CONSTRAINT "service_alerts_pkey" PRIMARY KEY ("service_id","kind")
);

CREATE INDEX "service_metric_buckets_bucket_start_idx" ON "service_metric_buckets" USING BRIN ("bucket_start");

ALTER TABLE "service_metric_buckets" ADD CONSTRAINT "service_metric_buckets_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "service_alerts" ADD CONSTRAINT "service_alerts_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;
