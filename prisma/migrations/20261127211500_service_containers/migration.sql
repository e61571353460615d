-- How many containers a service's definition runs (deploy.replicas summed over its components;
-- issue 27): the per-customer cap (CUSTOMER_MAX_CONTAINERS) sums it over a customer's live
-- services under a per-customer advisory lock. Existing services count as one until their next
-- deploy records their plan's figure.
ALTER TABLE "services" ADD COLUMN "containers" INTEGER NOT NULL DEFAULT 1;
