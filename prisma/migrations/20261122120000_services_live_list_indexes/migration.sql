-- List indexes over live services only (hand-written: partial and trigram indexes are beyond
-- schema.prisma). Every list query filters `deleted_at IS NULL` and breaks ties by id, and its
-- `total` is a count over the same filter: with these, each filter and sort is an index scan of
-- the first page and the filtered counts are index-only scans, instead of sorting or scanning the
-- whole table (measured at 100k services in docs/performance.md).

-- Search is a case-insensitive substring (ILIKE '%term%'); pg_trgm is a trusted extension.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Default sort (created_at desc, id desc) and sort=updated_at, skipping deleted rows in the index.
CREATE INDEX "services_live_created_at_id_idx" ON "services"("created_at", "id") WHERE "deleted_at" IS NULL;
CREATE INDEX "services_live_updated_at_id_idx" ON "services"("updated_at", "id") WHERE "deleted_at" IS NULL;

-- sort=status (status, id): without it the largest status group is sorted on every request.
CREATE INDEX "services_live_status_id_idx" ON "services"("status", "id") WHERE "deleted_at" IS NULL;

-- status / customer_id filters with the default sort; their counts become index-only scans.
CREATE INDEX "services_live_status_created_at_id_idx" ON "services"("status", "created_at", "id") WHERE "deleted_at" IS NULL;
CREATE INDEX "services_live_customer_id_created_at_id_idx" ON "services"("customer_id", "created_at", "id") WHERE "deleted_at" IS NULL;

-- search: ILIKE '%term%' on name.
CREATE INDEX "services_live_name_trgm_idx" ON "services" USING gin ("name" gin_trgm_ops) WHERE "deleted_at" IS NULL;
