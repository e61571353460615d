-- The platform's own certificates (issue 34, docs/tls.md): today the wildcard of APPS_DOMAIN.
-- Every replica loads the current one into its proxy; one replica at a time renews it (advisory
-- lock). A failed renewal records last_error and keeps the certificate that still serves.
CREATE TABLE "tls_certificates" (
    "name" TEXT NOT NULL,
    "certificate_pem" TEXT,
    "private_key_pem" TEXT,
    "account_key_pem" TEXT,
    "issuer" TEXT,
    "not_before" TIMESTAMPTZ(3),
    "not_after" TIMESTAMPTZ(3),
    "renew_after" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "last_attempt_at" TIMESTAMPTZ(3),
    "issued_count" INTEGER NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tls_certificates_pkey" PRIMARY KEY ("name")
);
