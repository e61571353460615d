-- A customer's own backup target (docs/backups.md#a-customers-own-target), its credentials sealed
-- with the customer's data key (an envelope in `credentials`, never plaintext), and on each backup
-- where a `customer` target put it, so a restore after the target changed can say so.
CREATE TABLE "customer_backup_targets" (
    "customer_id" TEXT NOT NULL,
    "endpoint" TEXT NOT NULL,
    "bucket" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "region" TEXT NOT NULL,
    "ca_pem" TEXT,
    "credentials" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "customer_backup_targets_pkey" PRIMARY KEY ("customer_id")
);

ALTER TABLE "customer_backup_targets" ADD CONSTRAINT "customer_backup_targets_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Expand only: NULL for every backup taken before (none of them went to a customer's target).
ALTER TABLE "backups" ADD COLUMN "target_location" TEXT;
