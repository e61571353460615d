-- Hand-written: service_counts also counts changes, so a list can tell, from at most 4 rows per
-- customer in scope, whether the set of live services it would match may have changed since it
-- last counted them. The API keeps the exact total of a search with the sum of `changes` it was
-- counted at, and counts again only when that sum moved (docs/api-decisions.md, List defaults).
--
-- `changes` only ever grows: each insert, delete, soft delete, restore, move between customers or
-- statuses, and rename of a live service adds 1 to the row of its old and its new
-- (customer, status), in the same transaction. Two snapshots that read the same sum over a set of
-- rows therefore saw the same committed changes to the services those rows count.
--
-- Expand-only: the previous release's API reads `live` and never `changes`, and its writes fire
-- these triggers like any other.

ALTER TABLE "service_counts" ADD COLUMN "changes" BIGINT NOT NULL DEFAULT 0;

-- No writes to services while the trigger function and triggers are replaced.
LOCK TABLE "services" IN SHARE ROW EXCLUSIVE MODE;

CREATE OR REPLACE FUNCTION "services_count_live"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  old_customer text;
  old_status "ServiceStatus";
  new_customer text;
  new_status "ServiceStatus";
BEGIN
  IF TG_OP <> 'INSERT' THEN
    IF OLD.deleted_at IS NULL THEN
      old_customer := OLD.customer_id;
      old_status := OLD.status;
    END IF;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    IF NEW.deleted_at IS NULL THEN
      new_customer := NEW.customer_id;
      new_status := NEW.status;
    END IF;
  END IF;
  -- Both changes in one statement, in key order: two transactions moving services in opposite
  -- directions between the same two rows lock them in the same order, so they cannot deadlock.
  -- A rename stays in its row (delta 0) but is still a change: its searches may match differently.
  INSERT INTO "service_counts" AS c ("customer_id", "status", "live", "changes")
  SELECT d.customer_id, d.status, sum(d.delta)::int, 1
  FROM (VALUES (old_customer, old_status, -1), (new_customer, new_status, 1)) AS d(customer_id, status, delta)
  WHERE d.customer_id IS NOT NULL
  GROUP BY d.customer_id, d.status
  ORDER BY d.customer_id, d.status
  ON CONFLICT ("customer_id", "status")
    DO UPDATE SET "live" = c."live" + EXCLUDED."live", "changes" = c."changes" + 1;
  RETURN NULL;
END
$$;

-- As before, plus renames of live services; telemetry updates still never fire it.
DROP TRIGGER "services_count_live_update" ON "services";
CREATE TRIGGER "services_count_live_update"
  AFTER UPDATE OF "status", "customer_id", "deleted_at", "name" ON "services"
  FOR EACH ROW
  WHEN (OLD."status" IS DISTINCT FROM NEW."status"
        OR OLD."customer_id" IS DISTINCT FROM NEW."customer_id"
        OR (OLD."deleted_at" IS NULL) <> (NEW."deleted_at" IS NULL)
        OR (NEW."deleted_at" IS NULL AND OLD."name" IS DISTINCT FROM NEW."name"))
  EXECUTE FUNCTION "services_count_live"();

-- Truncation zeroes the counts instead of deleting the rows: their `changes` must keep growing.
CREATE OR REPLACE FUNCTION "services_count_reset"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "service_counts" SET "live" = 0, "changes" = "changes" + 1;
  RETURN NULL;
END
$$;
