-- What the runtime could not honour from a deployment's plan (issue 17, docs/deployments.md): the
-- single engine's one container where deploy.replicas asked for more, placement and reservations
-- it ignores, what Swarm cannot do. Said on the deployment, never dropped silently.
ALTER TABLE "deployments" ADD COLUMN "warnings" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
