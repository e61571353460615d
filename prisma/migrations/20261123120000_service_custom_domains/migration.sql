-- CreateTable
CREATE TABLE "service_custom_domains" (
    "name" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,

    CONSTRAINT "service_custom_domains_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "service_custom_domains_service_id_idx" ON "service_custom_domains"("service_id");

-- AddForeignKey
ALTER TABLE "service_custom_domains" ADD CONSTRAINT "service_custom_domains_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written: a custom domain belongs to at most one live service, decided by the primary key
-- on the normalised (lower-case, no trailing dot) name rather than by a check-then-act read in
-- the API, which two concurrent PATCHes both passed. `services.custom_domains` stays the list the
-- API and worker read; this trigger keeps the claims table equal to it for live services, so any
-- writer of that column (now or later) goes through the constraint: the second claimant's UPDATE
-- waits on the first's uncommitted key and then fails with 23505.
ALTER TABLE "service_custom_domains" ADD CONSTRAINT "service_custom_domains_name_normalised"
  CHECK ("name" = lower("name") AND "name" !~ '\.$' AND length("name") BETWEEN 1 AND 253);

LOCK TABLE "services" IN SHARE ROW EXCLUSIVE MODE;

CREATE FUNCTION "services_claim_custom_domains"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "service_custom_domains" WHERE "service_id" = NEW."id";
  IF NEW."deleted_at" IS NULL THEN
    INSERT INTO "service_custom_domains" ("name", "service_id")
    SELECT DISTINCT lower(rtrim(d, '.')), NEW."id" FROM unnest(NEW."custom_domains") AS d;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "services_claim_custom_domains"
  AFTER INSERT OR UPDATE OF "custom_domains", "deleted_at" ON "services"
  FOR EACH ROW EXECUTE FUNCTION "services_claim_custom_domains"();

-- Existing claims: the oldest live service keeps a domain claimed twice before this migration.
INSERT INTO "service_custom_domains" ("name", "service_id")
SELECT DISTINCT ON (lower(rtrim(d, '.'))) lower(rtrim(d, '.')), s."id"
FROM "services" s, unnest(s."custom_domains") AS d
WHERE s."deleted_at" IS NULL
ORDER BY lower(rtrim(d, '.')), s."created_at"
ON CONFLICT DO NOTHING;
