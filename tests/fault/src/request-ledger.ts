import { isFinalDeployment } from '@hostctl/domain';
import { randomUUID } from 'node:crypto';
import type { Db } from '@hostctl/db';
import type { FaultClient, Reply } from './fault-client.js';

/**
 * Every request the scenario makes, and what the API answered. An accepted request (2xx) is a
 * promise: its deployment must reach a final state, its delete must purge the service. Refused
 * requests (503 during an outage) are counted, never retried behind the ledger's back.
 */
export interface AcceptedRequest {
  kind: 'create' | 'redeploy' | 'delete';
  serviceId: string;
  deploymentId?: string;
  at: number;
}

export function composeFor(index: number): string {
  // A second of start-up widens the window in which a kill lands in start/verify; every third
  // service has a named volume, so volumes are created, kept and removed under faults too; every
  // second one has no restart policy, so after a Docker restart the reconciler must bring it back
  // (the others Docker restarts itself: `unless-stopped` is the default).
  const volume = index % 3 === 0;
  const noRestart = index % 2 === 1;
  return [
    'services:',
    '  web:',
    '    image: local/busybox:1',
    '    command: ["sh", "-c", "sleep 1; exec httpd -f -p 8080 -h /www"]',
    '    ports: ["8080"]',
    ...(noRestart ? ['    restart: "no"'] : []),
    ...(volume ? ['    volumes: ["data:/data"]', 'volumes:', '  data: {}'] : []),
    '',
  ].join('\n');
}

export function createLedger(client: FaultClient, customerId: string) {
  const accepted: AcceptedRequest[] = [];
  const refused: { what: string; status: number; ms: number; retryAfter: string | null }[] = [];
  const live = new Set<string>();
  let created = 0;

  const record = (what: string, reply: Reply) => {
    if (reply.status >= 200 && reply.status < 300) return true;
    refused.push({ what, status: reply.status, ms: reply.ms, retryAfter: reply.headers.get('retry-after') });
    return false;
  };

  return {
    accepted,
    refused,
    live,
    async create(compose?: string): Promise<string | undefined> {
      const index = created++;
      const reply = await client.post<{ id: string; deploy_job_id: string }>('/api/services', {
        name: `fault-${index}-${randomUUID().slice(0, 6)}`,
        customer_id: customerId,
        deploy_method: 'compose',
        compose: compose ?? composeFor(index),
      });
      if (!record('create', reply)) return undefined;
      accepted.push({
        kind: 'create',
        serviceId: reply.body.id,
        deploymentId: reply.body.deploy_job_id,
        at: Date.now(),
      });
      live.add(reply.body.id);
      return reply.body.id;
    },
    async redeploy(serviceId: string): Promise<void> {
      const reply = await client.post<{ deploy_job_id: string }>(`/api/services/${serviceId}/redeploy`);
      if (!record('redeploy', reply)) return;
      accepted.push({ kind: 'redeploy', serviceId, deploymentId: reply.body.deploy_job_id, at: Date.now() });
    },
    /** A read that changes nothing, for outage checks: status, time taken and Retry-After. */
    async probe(path: string): Promise<{ status: number; ms: number; retryAfter: string | null }> {
      const reply = await client.get(path);
      return { status: reply.status, ms: reply.ms, retryAfter: reply.headers.get('retry-after') };
    },
    async remove(serviceId: string): Promise<void> {
      const reply = await client.delete(`/api/services/${serviceId}`);
      if (!record('delete', reply)) return;
      accepted.push({ kind: 'delete', serviceId, at: Date.now() });
      live.delete(serviceId);
    },
  };
}

export type Ledger = ReturnType<typeof createLedger>;

/** Accepted requests not in a final state yet (deployment final, deleted service purged). */
export async function unfinished(db: Db, requests: AcceptedRequest[]): Promise<string[]> {
  const deploymentIds = requests.flatMap((request) => (request.deploymentId ? [request.deploymentId] : []));
  const deployments = new Map(
    (
      await db.deployment.findMany({
        where: { id: { in: deploymentIds } },
        select: { id: true, status: true },
      })
    ).map((row) => [row.id, row.status as string]),
  );
  const deleteIds = requests
    .filter((request) => request.kind === 'delete')
    .map((request) => request.serviceId);
  const purged = new Set(
    (
      await db.service.findMany({
        where: { id: { in: deleteIds }, purgedAt: { not: null } },
        select: { id: true },
      })
    ).map((row) => row.id),
  );
  const open: string[] = [];
  for (const request of requests) {
    if (request.kind === 'delete') {
      if (!purged.has(request.serviceId)) open.push(`delete of ${request.serviceId} not purged`);
    } else if (!isFinalDeployment(deployments.get(request.deploymentId ?? '') ?? '')) {
      open.push(
        `${request.kind} ${request.deploymentId} is ${deployments.get(request.deploymentId ?? '') ?? 'missing'}`,
      );
    }
  }
  return open;
}

/** Waits until every request is final; returns when that happened, or throws with what is open. */
export async function waitFinal(db: Db, requests: AcceptedRequest[], timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await unfinished(db, requests);
    if (open.length === 0) return Date.now();
    if (Date.now() > deadline)
      throw new Error(`not final after ${timeoutMs} ms: ${open.slice(0, 10).join('; ')}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
