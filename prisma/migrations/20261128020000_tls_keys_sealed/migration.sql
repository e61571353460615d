-- The certificate's private key and the ACME account key are sealed at rest with the vault
-- (docs/secrets.md, docs/tls.md): the columns become jsonb so they hold an envelope
-- {"$enc", "dk", "ct"} like the variables do. Existing PEM text becomes a JSON string here and is
-- sealed online by the worker at start (sealPlaintextRows) or by `hostctl secrets seal`.
ALTER TABLE "tls_certificates"
    ALTER COLUMN "private_key_pem" TYPE JSONB USING to_jsonb("private_key_pem"),
    ALTER COLUMN "account_key_pem" TYPE JSONB USING to_jsonb("account_key_pem");
