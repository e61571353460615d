-- Repository checks of a backup (docs/backups.md#verification): the last one's outcome and time.
ALTER TABLE "backups" ADD COLUMN "verify_status" TEXT;
ALTER TABLE "backups" ADD COLUMN "verify_error" TEXT;
ALTER TABLE "backups" ADD COLUMN "verified_at" TIMESTAMPTZ(3);
