-- Per-customer quotas (issue 31, docs/quotas.md): named plans, a plan and overrides per customer,
-- and what each service's definition claims of memory and CPU (limits summed over its containers,
-- replicas included), counted with `containers` under the customer's advisory lock.
CREATE TABLE "quota_plans" (
    "name" TEXT NOT NULL,
    "limits" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "quota_plans_pkey" PRIMARY KEY ("name")
);

-- The plan of every customer without one. The caps that existed before keep their values
-- (CUSTOMER_MAX_CONTAINERS' default of 100, 25 notification subscriptions); the rest is unlimited.
INSERT INTO "quota_plans" ("name", "limits", "updated_at") VALUES (
  'default',
  '{"services": null, "containers": 100, "memory_mb": null, "cpus": null, "deploys_per_hour": null, "notification_subscriptions": 25}',
  CURRENT_TIMESTAMP
);

ALTER TABLE "customers" ADD COLUMN "quota_plan" TEXT,
ADD COLUMN "quota_overrides" JSONB NOT NULL DEFAULT '{}';

ALTER TABLE "customers" ADD CONSTRAINT "customers_quota_plan_fkey" FOREIGN KEY ("quota_plan") REFERENCES "quota_plans"("name") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Existing services claim what their last deploy recorded (without replicas, which it did not
-- multiply); their next deploy records the exact figure.
ALTER TABLE "services" ADD COLUMN "claimed_memory_mb" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "claimed_millicpus" INTEGER NOT NULL DEFAULT 0;
UPDATE "services" SET "claimed_memory_mb" = ceil("memory_limit_mb")::int, "claimed_millicpus" = ceil("cpu_limit" * 1000)::int;
