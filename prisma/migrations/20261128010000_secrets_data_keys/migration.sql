-- CreateTable
CREATE TABLE "data_keys" (
    "id" TEXT NOT NULL,
    "customer_id" TEXT NOT NULL,
    "kek_id" TEXT NOT NULL,
    "wrapped" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "rewrapped_at" TIMESTAMPTZ(3),

    CONSTRAINT "data_keys_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "data_keys_customer_id_key" ON "data_keys"("customer_id");

-- CreateIndex
CREATE INDEX "data_keys_kek_id_idx" ON "data_keys"("kek_id");
