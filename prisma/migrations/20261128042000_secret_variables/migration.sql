-- Secret variables (docs/secrets.md#secret-variables): their values live in the sealed
-- services.variables like any variable; this column only says which names are secret.
ALTER TABLE "services" ADD COLUMN "secret_names" JSONB NOT NULL DEFAULT '{}';

-- Which variables a release ran as secret: a rollback gives the service back variables and
-- marks together, so a secret never comes back as a plain variable.
ALTER TABLE "deployments" ADD COLUMN "source_secret_names" JSONB;

-- The name of a revealed secret variable (never its value).
ALTER TABLE "audit_events" ADD COLUMN "subject" TEXT;
