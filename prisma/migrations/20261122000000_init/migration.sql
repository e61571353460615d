-- CreateEnum
CREATE TYPE "Role" AS ENUM ('admin', 'operator', 'viewer');

-- CreateEnum
CREATE TYPE "ServiceStatus" AS ENUM ('running', 'stopped', 'deploying', 'failed');

-- CreateEnum
CREATE TYPE "DeployMethod" AS ENUM ('template', 'git', 'compose', 'ai');

-- CreateEnum
CREATE TYPE "DeploymentStatus" AS ENUM ('queued', 'running', 'succeeded', 'failed', 'superseded', 'cancelled');

-- CreateTable
CREATE TABLE "customers" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "customers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "users" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "role" "Role" NOT NULL,
    "customer_id" TEXT,
    "oidc_issuer" TEXT,
    "oidc_subject" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "digest" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3),
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "services" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "status" "ServiceStatus" NOT NULL,
    "deploy_method" "DeployMethod" NOT NULL,
    "template_id" TEXT,
    "compose" TEXT NOT NULL DEFAULT '',
    "variables" JSONB NOT NULL DEFAULT '{}',
    "git_url" TEXT,
    "git_branch" TEXT,
    "ai_url" TEXT,
    "custom_domains" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "url" TEXT NOT NULL,
    "health_status" TEXT NOT NULL DEFAULT 'unknown',
    "health_last_check" TIMESTAMPTZ(3),
    "health_consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "cpu_usage" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "memory_usage_mb" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "memory_limit_mb" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "cpu_limit" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "storage_mb" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "deployed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "deleted_at" TIMESTAMPTZ(3),
    "purged_at" TIMESTAMPTZ(3),

    CONSTRAINT "services_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "deployments" (
    "id" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "trigger" TEXT NOT NULL,
    "status" "DeploymentStatus" NOT NULL DEFAULT 'queued',
    "step" TEXT,
    "commit" TEXT,
    "image_digest" TEXT,
    "error" TEXT,
    "plan" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "deployments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "deployment_logs" (
    "id" BIGSERIAL NOT NULL,
    "deployment_id" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "stream" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "deployment_logs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "service_events" (
    "id" BIGSERIAL NOT NULL,
    "service_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "service_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "customers_name_key" ON "customers"("name");

-- CreateIndex
CREATE UNIQUE INDEX "users_email_key" ON "users"("email");

-- CreateIndex
CREATE INDEX "users_customer_id_idx" ON "users"("customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "users_oidc_issuer_oidc_subject_key" ON "users"("oidc_issuer", "oidc_subject");

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_digest_key" ON "api_keys"("digest");

-- CreateIndex
CREATE INDEX "api_keys_user_id_created_at_idx" ON "api_keys"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "services_customer_id_created_at_idx" ON "services"("customer_id", "created_at");

-- CreateIndex
CREATE INDEX "services_status_created_at_idx" ON "services"("status", "created_at");

-- CreateIndex
CREATE INDEX "services_created_at_idx" ON "services"("created_at");

-- CreateIndex
CREATE INDEX "services_updated_at_idx" ON "services"("updated_at");

-- CreateIndex
CREATE INDEX "services_name_idx" ON "services"("name");

-- CreateIndex
CREATE INDEX "deployments_service_id_created_at_idx" ON "deployments"("service_id", "created_at");

-- CreateIndex
CREATE INDEX "deployments_status_created_at_idx" ON "deployments"("status", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "deployment_logs_deployment_id_seq_key" ON "deployment_logs"("deployment_id", "seq");

-- CreateIndex
CREATE INDEX "service_events_service_id_created_at_id_idx" ON "service_events"("service_id", "created_at" DESC, "id" DESC);

-- AddForeignKey
ALTER TABLE "users" ADD CONSTRAINT "users_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "services" ADD CONSTRAINT "services_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deployments" ADD CONSTRAINT "deployments_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "deployment_logs" ADD CONSTRAINT "deployment_logs_deployment_id_fkey" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "service_events" ADD CONSTRAINT "service_events_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Hand-written additions Prisma's schema language cannot express.
-- A name is unique among live services only: a deleted service's name may be reused at once.
CREATE UNIQUE INDEX "services_live_name_key" ON "services"("name") WHERE "deleted_at" IS NULL;
-- At most one deployment per service waits in the queue: further redeploys coalesce into it.
CREATE UNIQUE INDEX "deployments_one_active_per_service" ON "deployments"("service_id") WHERE "status" = 'queued';
