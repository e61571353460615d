-- Deploy tokens and the audit log (issue 15, docs/auth.md#deploy-tokens, docs/audit.md).

-- Deploy-token limits on API keys. Deleting the service or customer deletes the key with it: a
-- limit must never lapse into "no limit" (ON DELETE SET NULL would widen the key).
ALTER TABLE "api_keys"
  ADD COLUMN "service_id" TEXT,
  ADD COLUMN "customer_id" TEXT,
  ADD COLUMN "actions" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];

ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_service_id_fkey"
  FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_customer_id_fkey"
  FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Audit events.
CREATE TABLE "audit_events" (
    "id" TEXT NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor_type" TEXT NOT NULL,
    "actor_user_id" TEXT,
    "actor_api_key_id" TEXT,
    "customer_id" TEXT,
    "method" TEXT NOT NULL,
    "route" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target_type" TEXT,
    "target_id" TEXT,
    "status_code" INTEGER NOT NULL,
    "error_code" TEXT,
    "source_address" TEXT NOT NULL,
    "request_id" TEXT NOT NULL,

    CONSTRAINT "audit_events_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "audit_events_occurred_at_id_idx" ON "audit_events"("occurred_at", "id");
CREATE INDEX "audit_events_customer_id_occurred_at_idx" ON "audit_events"("customer_id", "occurred_at");

-- Hand-written below: what Prisma cannot express.

-- A key's actions come from the vocabulary only; a service-limited key names its customer too.
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_actions_vocabulary"
  CHECK ("actions" <@ ARRAY['read', 'deploy', 'operate', 'manage']::TEXT[]);
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_service_has_customer"
  CHECK ("service_id" IS NULL OR "customer_id" IS NOT NULL);

-- Append-only: no UPDATE ever, and no DELETE of a row younger than a day (retention deletes old
-- rows only, AUDIT_RETENTION_DAYS >= 1). A bug or an injected statement in the app cannot rewrite
-- or wipe recent history; only a database owner dropping the trigger can.
CREATE FUNCTION "audit_events_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    RAISE EXCEPTION 'audit_events is append-only: UPDATE refused' USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF OLD."occurred_at" > now() - interval '1 day' THEN
    RAISE EXCEPTION 'audit_events is append-only: rows younger than a day cannot be deleted'
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  RETURN OLD;
END;
$$;

CREATE TRIGGER "audit_events_append_only"
  BEFORE UPDATE OR DELETE ON "audit_events"
  FOR EACH ROW EXECUTE FUNCTION "audit_events_append_only"();
