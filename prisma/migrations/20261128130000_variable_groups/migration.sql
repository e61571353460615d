-- Shared variable groups per customer (docs/secrets.md#variable-groups). Expand only: new tables
-- and a nullable column, so the previous version runs against this schema unchanged.

-- CreateTable
CREATE TABLE "variable_groups" (
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "variables" JSONB NOT NULL DEFAULT '{}',
    "secret_names" JSONB NOT NULL DEFAULT '{}',
    "version" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "variable_groups_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "service_variable_groups" (
    "service_id" TEXT NOT NULL,
    "group_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,

    CONSTRAINT "service_variable_groups_pkey" PRIMARY KEY ("service_id","group_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "variable_groups_customer_id_name_key" ON "variable_groups"("customer_id", "name");

-- CreateIndex
CREATE INDEX "service_variable_groups_group_id_idx" ON "service_variable_groups"("group_id");

-- AddForeignKey
ALTER TABLE "variable_groups" ADD CONSTRAINT "variable_groups_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "service_variable_groups" ADD CONSTRAINT "service_variable_groups_service_id_fkey" FOREIGN KEY ("service_id") REFERENCES "services"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "service_variable_groups" ADD CONSTRAINT "service_variable_groups_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "variable_groups"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The groups a release ran with, by version (never their values: those are in the sealed plan).
ALTER TABLE "deployments" ADD COLUMN "source_variable_groups" JSONB;
