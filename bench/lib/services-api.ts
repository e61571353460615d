import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { isFinalDeployment } from '@hostctl/domain';
import { BENCH } from './config.js';

/** The service every deploy benchmark creates: one busybox httpd container with a web port. */
export const BENCH_COMPOSE = `services:
  web:
    image: ${BENCH.image}
    ports:
      - "8080"
`;

export interface Api {
  url: string;
  authorization: string;
}

async function call<T>(
  api: Api,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      authorization: api.authorization,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
}

export function uniqueServiceName(): string {
  return `bench-${randomUUID().slice(0, 8)}`;
}

/** POST /api/services (compose); returns the service id and its deployment id. */
export async function createService(
  api: Api,
  customerId: string,
  name = uniqueServiceName(),
  compose = BENCH_COMPOSE,
): Promise<{ id: string; deploymentId: string }> {
  const { status, body } = await call<{ id: string; deploy_job_id: string }>(api, 'POST', '/api/services', {
    name,
    customer_id: customerId,
    deploy_method: 'compose',
    compose,
  });
  if (status !== 201) throw new Error(`POST /api/services answered ${status}: ${JSON.stringify(body)}`);
  return { id: body.id, deploymentId: body.deploy_job_id };
}

interface DeploymentView {
  status: string;
  update_order?: string | null;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  logs: { timestamp: string; message: string }[];
}

/** GET /api/deployments/:id?wait=<s>: answers once the deployment is final. */
export async function awaitDeployment(api: Api, deploymentId: string, waitS = 60): Promise<DeploymentView> {
  const { status, body } = await call<DeploymentView>(
    api,
    'GET',
    `/api/deployments/${deploymentId}?wait=${waitS}`,
  );
  if (status !== 200) throw new Error(`GET /api/deployments/${deploymentId} answered ${status}`);
  return body;
}

/** POST /api/services/:id/redeploy; returns the deployment id. */
export async function redeployService(api: Api, serviceId: string): Promise<string> {
  const { status, body } = await call<{ deploy_job_id: string }>(
    api,
    'POST',
    `/api/services/${serviceId}/redeploy`,
  );
  if (status !== 200) throw new Error(`POST /api/services/${serviceId}/redeploy answered ${status}`);
  return body.deploy_job_id;
}

/** PATCH /api/services/:id (a change that redeploys, e.g. `https`); returns the deployment id. */
export async function updateService(api: Api, serviceId: string, changes: unknown): Promise<string> {
  const { status, body } = await call<{ deploy_job_id: string }>(
    api,
    'PATCH',
    `/api/services/${serviceId}`,
    changes,
  );
  if (status !== 200)
    throw new Error(`PATCH /api/services/${serviceId} answered ${status}: ${JSON.stringify(body)}`);
  return body.deploy_job_id;
}

export async function serviceStatus(api: Api, serviceId: string): Promise<string> {
  const { status, body } = await call<{ status: string }>(api, 'GET', `/api/services/${serviceId}`);
  if (status !== 200) throw new Error(`GET /api/services/${serviceId} answered ${status}`);
  return body.status;
}

/** Request → deployment succeeded → service running, timed from before the POST. */
export async function timedDeploy(
  api: Api,
  customerId: string,
): Promise<{ ms: number; serviceId: string; deployment: DeploymentView }> {
  const t0 = performance.now();
  const created = await createService(api, customerId);
  const deployment = await awaitDeployment(api, created.deploymentId);
  const ms = performance.now() - t0;
  if (deployment.status !== 'succeeded') {
    throw new Error(
      `deployment ${created.deploymentId} ended ${deployment.status}: ${deployment.error ?? ''}\n${deployment.logs.map((l) => l.message).join('\n')}`,
    );
  }
  const status = await serviceStatus(api, created.id);
  if (status !== 'running')
    throw new Error(`service ${created.id} is ${status} after a successful deployment`);
  return { ms, serviceId: created.id, deployment };
}

/** POST /api/services/:id/<action>; the API waits for the worker's result. */
export async function timedLifecycle(
  api: Api,
  serviceId: string,
  action: 'start' | 'stop' | 'restart',
): Promise<number> {
  const expected = action === 'stop' ? 'stopped' : 'running';
  const t0 = performance.now();
  const { status, body } = await call<{ status: string; message: string }>(
    api,
    'POST',
    `/api/services/${serviceId}/${action}`,
  );
  const ms = performance.now() - t0;
  if (status !== 200 || body.status !== expected) {
    throw new Error(
      `${action} of ${serviceId} answered ${status} ${JSON.stringify(body)}, expected status ${expected}`,
    );
  }
  return ms;
}

/**
 * DELETE /api/services/:id for each, then waits until the worker has purged them all (purged_at
 * set: containers, network and volumes removed).
 */
export async function deleteServices(
  api: Api,
  pool: pg.Pool,
  serviceIds: string[],
  timeoutMs = 180_000,
): Promise<void> {
  for (const id of serviceIds) {
    const { status } = await call(api, 'DELETE', `/api/services/${id}`);
    if (status !== 204) throw new Error(`DELETE /api/services/${id} answered ${status}`);
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM services WHERE id = ANY($1) AND purged_at IS NULL',
      [serviceIds],
    );
    if (Number(rows[0]!.n) === 0) return;
    if (Date.now() > deadline)
      throw new Error(`${rows[0]!.n} deleted services were not purged within ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** Polls the deployments' rows until every one is final; counts how they ended. */
export async function untilFinal(
  pool: pg.Pool,
  deploymentIds: string[],
  timeoutMs = 300_000,
): Promise<{ succeeded: number; failed: number; firstError: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ status: string; error: string | null }>(
      'SELECT status, error FROM deployments WHERE id = ANY($1)',
      [deploymentIds],
    );
    if (rows.length === deploymentIds.length && rows.every((r) => isFinalDeployment(r.status))) {
      const failed = rows.filter((r) => r.status !== 'succeeded');
      return {
        succeeded: rows.length - failed.length,
        failed: failed.length,
        firstError: failed[0]?.error ?? failed[0]?.status ?? '',
      };
    }
    if (Date.now() > deadline) throw new Error(`deployments not final within ${timeoutMs} ms`);
    await sleep(50);
  }
}

interface CustomerQuota {
  plan: string;
  overrides: Record<string, number | null>;
}

/** GET /api/customers/:id/quota: the customer's plan and overrides (limits and usage left out). */
export async function customerQuota(api: Api, customerId: string): Promise<CustomerQuota> {
  const { status, body } = await call<{ plan: string | null; overrides: CustomerQuota['overrides'] }>(
    api,
    'GET',
    `/api/customers/${customerId}/quota`,
  );
  if (status !== 200) throw new Error(`GET /api/customers/${customerId}/quota answered ${status}`);
  // No plan of its own is the default plan, which is what a PUT names.
  return { plan: body.plan ?? 'default', overrides: body.overrides };
}

/** PUT /api/customers/:id/quota (an unscoped admin's key). */
export async function setCustomerQuota(api: Api, customerId: string, quota: CustomerQuota): Promise<void> {
  const { status, body } = await call(api, 'PUT', `/api/customers/${customerId}/quota`, quota);
  if (status !== 200)
    throw new Error(`PUT /api/customers/${customerId}/quota answered ${status}: ${JSON.stringify(body)}`);
}

/** POST /api/services/:id/runs, then GET /api/runs/:id?wait=60 until final: request → final answer. */
export async function timedRun(
  api: Api,
  serviceId: string,
  command: string[],
): Promise<{ ms: number; exitCode: number | null; durationMs: number | null }> {
  const t0 = performance.now();
  const created = await call<{ id: string }>(api, 'POST', `/api/services/${serviceId}/runs`, { command });
  if (created.status !== 202)
    throw new Error(
      `POST /api/services/${serviceId}/runs answered ${created.status}: ${JSON.stringify(created.body)}`,
    );
  for (;;) {
    const { status, body } = await call<{
      status: string;
      exit_code: number | null;
      duration_ms: number | null;
    }>(api, 'GET', `/api/runs/${created.body.id}?wait=60`);
    if (status !== 200) throw new Error(`GET /api/runs/${created.body.id} answered ${status}`);
    if (!['queued', 'running'].includes(body.status)) {
      if (body.status !== 'succeeded') throw new Error(`run ${created.body.id} ended ${body.status}`);
      return { ms: performance.now() - t0, exitCode: body.exit_code, durationMs: body.duration_ms };
    }
  }
}

/** POST /api/services/:id/schedules; returns the schedule's id and its first time. */
export async function createSchedule(
  api: Api,
  serviceId: string,
  schedule: { name: string; cron: string; command: string[] },
): Promise<{ id: string; nextRunAt: Date }> {
  const { status, body } = await call<{ id: string; next_run_at: string }>(
    api,
    'POST',
    `/api/services/${serviceId}/schedules`,
    schedule,
  );
  if (status !== 201)
    throw new Error(`POST /api/services/${serviceId}/schedules answered ${status}: ${JSON.stringify(body)}`);
  return { id: body.id, nextRunAt: new Date(body.next_run_at) };
}
