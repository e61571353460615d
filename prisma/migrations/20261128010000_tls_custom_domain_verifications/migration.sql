-- Proof of ownership for custom domains (issue 34, docs/tls.md#custom-domains). One row per custom
-- domain of a live service: the token the owner publishes, whether the platform has seen it, and
-- the last check's error. Nothing is routed or published in DNS for a name that is not verified.
CREATE TABLE "custom_domain_verifications" (
    "service_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "token" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "last_error" TEXT,
    "checked_at" TIMESTAMPTZ(3),
    "verified_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "custom_domain_verifications_pkey" PRIMARY KEY ("service_id","name")
);

-- AddForeignKey
ALTER TABLE "custom_domain_verifications" ADD CONSTRAINT "custom_domain_verifications_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written: the two states, and at most one verified holder of a name whatever happens to the
-- claims table (a second one would let two customers' routes answer for one host).
ALTER TABLE "custom_domain_verifications" ADD CONSTRAINT "custom_domain_verifications_status"
  CHECK ("status" IN ('pending', 'verified'));
CREATE UNIQUE INDEX "custom_domain_verifications_verified_name_key"
  ON "custom_domain_verifications" ("name") WHERE "status" = 'verified';

LOCK TABLE "services" IN SHARE ROW EXCLUSIVE MODE;

-- The claims trigger also keeps one verification row per claimed name: a name added gets a fresh
-- random token (pending), a name kept keeps its row (and so its state), a name dropped or a
-- deleted service loses it. Any writer of services.custom_domains goes through this, as it does
-- through the claim key.
CREATE OR REPLACE FUNCTION "services_claim_custom_domains"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "service_custom_domains" WHERE "service_id" = NEW."id";
  IF NEW."deleted_at" IS NULL THEN
    INSERT INTO "service_custom_domains" ("name", "service_id")
    SELECT DISTINCT lower(rtrim(d, '.')), NEW."id" FROM unnest(NEW."custom_domains") AS d;
  END IF;
  DELETE FROM "custom_domain_verifications" v
  WHERE v."service_id" = NEW."id"
    AND NOT EXISTS (SELECT 1 FROM "service_custom_domains" c WHERE c."service_id" = NEW."id" AND c."name" = v."name");
  INSERT INTO "custom_domain_verifications" ("service_id", "name", "token")
  SELECT NEW."id", c."name", replace(gen_random_uuid()::text, '-', '')
  FROM "service_custom_domains" c WHERE c."service_id" = NEW."id"
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

-- Existing domains were routed before this check existed: they stay routed (verified) rather
-- than going dark on upgrade. docs/tls.md says how an operator resets one to pending.
INSERT INTO "custom_domain_verifications" ("service_id", "name", "token", "status", "verified_at")
SELECT c."service_id", c."name", replace(gen_random_uuid()::text, '-', ''), 'verified', CURRENT_TIMESTAMP
FROM "service_custom_domains" c
ON CONFLICT DO NOTHING;
