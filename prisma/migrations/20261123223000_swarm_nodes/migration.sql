-- Swarm nodes and where tasks run (issue 17, docs/multi-host.md#nodes-api).
--
-- The API never talks to Docker (ARCHITECTURE.md): the worker's node observer writes a snapshot of
-- the swarm's nodes and of this installation's tasks here, and drain/activate travel the other way
-- as `requested_availability` plus a `node-availability` job the worker carries out.

CREATE TABLE "nodes" (
    "id" TEXT NOT NULL,
    "engine_id" TEXT NOT NULL,
    "hostname" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "availability" TEXT NOT NULL,
    "requested_availability" TEXT,
    "availability_error" TEXT,
    "address" TEXT NOT NULL,
    "engine_version" TEXT NOT NULL,
    "nano_cpus" BIGINT NOT NULL,
    "memory_bytes" BIGINT NOT NULL,
    "labels" JSONB NOT NULL DEFAULT '{}',
    "observed_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "nodes_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "nodes_engine_id_key" ON "nodes"("engine_id");

CREATE TABLE "node_tasks" (
    "id" TEXT NOT NULL,
    "node_id" TEXT NOT NULL,
    "instance" TEXT NOT NULL,
    "service_id" TEXT NOT NULL,
    "component" TEXT,
    "slot" INTEGER,
    "state" TEXT NOT NULL,
    "desired_state" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "node_tasks_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "node_tasks_node_id_idx" ON "node_tasks"("node_id");
CREATE INDEX "node_tasks_instance_idx" ON "node_tasks"("instance");
CREATE INDEX "node_tasks_service_id_idx" ON "node_tasks"("service_id");

ALTER TABLE "node_tasks" ADD CONSTRAINT "node_tasks_node_id_fkey"
  FOREIGN KEY ("node_id") REFERENCES "nodes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written below: what Prisma cannot express.

ALTER TABLE "nodes" ADD CONSTRAINT "nodes_role_check" CHECK ("role" IN ('manager', 'worker'));
ALTER TABLE "nodes" ADD CONSTRAINT "nodes_availability_check"
  CHECK ("availability" IN ('active', 'pause', 'drain'));
ALTER TABLE "nodes" ADD CONSTRAINT "nodes_requested_availability_check"
  CHECK ("requested_availability" IN ('active', 'drain'));
