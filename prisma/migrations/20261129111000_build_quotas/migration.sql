-- Build quotas (issue 31, docs/quotas.md): how long each deployment's build step took and when it
-- ended, so build_minutes_per_day sums the customer's builds of the last 24 hours. Written by the
-- worker when the step ends, succeeded or failed; null for deployments that built nothing.
ALTER TABLE "deployments" ADD COLUMN "build_ms" INTEGER,
ADD COLUMN "built_at" TIMESTAMPTZ(3);

-- The sum reads only the last day's builds.
CREATE INDEX "deployments_built_at_idx" ON "deployments" ("built_at") WHERE "built_at" IS NOT NULL;

-- The default plan names the two new quotas; a value an admin already set is kept. Two builds at
-- once is the default DEPLOY_CUSTOMER_CONCURRENCY share builds already had; 120 build minutes a
-- day is new: a customer past it is refused new builds until its oldest builds leave the window.
UPDATE "quota_plans" SET "limits" = '{"concurrent_builds": 2, "build_minutes_per_day": 120}'::jsonb || "limits",
  "updated_at" = CURRENT_TIMESTAMP
WHERE "name" = 'default';
