-- Additive: a deployment whose release is in a window records when it began (continuations).
ALTER TABLE "deployments" ADD COLUMN "window_started_at" TIMESTAMPTZ(3);

-- Other jobs of a service look for a deployment that owns it (few rows are ever non-null).
CREATE INDEX "deployments_window_started_service_idx" ON "deployments" ("service_id") WHERE "window_started_at" IS NOT NULL;
