-- A release records which version of its service's variables it ran (issue 30, item 4), as it
-- already records its variable groups' versions. The version is the count of writes to the
-- variables (or their secret marks), kept by the database itself: every writer bumps it, the
-- previous release's API and worker too during a rolling upgrade (docs/operations.md#upgrading),
-- so "same version" always means "not written since".
ALTER TABLE "services" ADD COLUMN "variables_version" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "deployments" ADD COLUMN "source_variables_version" INTEGER;

CREATE FUNCTION "services_bump_variables_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."variables_version" := OLD."variables_version" + 1;
  RETURN NEW;
END
$$;

-- A sealed write is never byte-equal to the row it replaces (a fresh nonce per seal): rewriting
-- the same values counts as a new version, which only makes a comparison fall back to values.
CREATE TRIGGER "services_variables_version"
  BEFORE UPDATE OF "variables", "secret_names" ON "services"
  FOR EACH ROW
  WHEN (OLD."variables" IS DISTINCT FROM NEW."variables" OR OLD."secret_names" IS DISTINCT FROM NEW."secret_names")
  EXECUTE FUNCTION "services_bump_variables_version"();
