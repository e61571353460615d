-- The dns-01 values the platform has published in its PowerDNS and not yet withdrawn
-- (docs/tls.md#leftover-challenge-records). An order writes its row before the TXT value and
-- deletes it after withdrawing the value, so a worker killed mid-order leaves a row behind: the
-- sweep withdraws the value once no order for the name runs (its advisory lock is free).
CREATE TABLE "acme_dns_challenges" (
    "id" BIGSERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "added_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "acme_dns_challenges_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "acme_dns_challenges_added_at_idx" ON "acme_dns_challenges"("added_at");
