-- Per-service HTTPS behaviour (docs/tls.md#https-and-plain-http). Expand only: the previous
-- version never reads the columns and its inserts get the defaults (redirect on, no HSTS).
ALTER TABLE "services" ADD COLUMN "https_redirect" BOOLEAN NOT NULL DEFAULT true,
ADD COLUMN "hsts_max_age" INTEGER;
