-- Terminals into running services (docs/jobs.md#terminal): one row per terminal, the worker's
-- record of which container it opened and how it ended. Typed input is never stored.
CREATE TABLE "exec_sessions" (
    "id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "component" TEXT NOT NULL,
    "command" TEXT[],
    "user_id" TEXT NOT NULL,
    "api_key_id" TEXT,
    "container_name" TEXT,
    "exit_code" INTEGER,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "opened_at" TIMESTAMPTZ(3),
    "closed_at" TIMESTAMPTZ(3),

    CONSTRAINT "exec_sessions_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "exec_sessions_service_id_created_at_idx" ON "exec_sessions"("service_id", "created_at");

ALTER TABLE "exec_sessions" ADD CONSTRAINT "exec_sessions_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written: the key action vocabulary gains `exec` (expand only: every stored key still passes).
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_actions_vocabulary";
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_actions_vocabulary"
  CHECK ("actions" <@ ARRAY['read', 'deploy', 'operate', 'manage', 'exec']::TEXT[]);
