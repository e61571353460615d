import { apiClient } from '@hostctl/testing';
import { APPS_DOMAIN } from './caddy-traffic.js';
import { eventually } from './client.js';
import { E2E_RUNTIME, TEST_IMAGE, type Runtime } from './env.js';
import type { Stack } from './stack.js';
import { unitsOf } from './workloads.js';

/**
 * A service whose releases differ only by their variables, so each test can ask for exactly the
 * release it needs: VERSION is what the page says, FAIL=1 makes the health check fail,
 * CRASH_AFTER=n makes the main process exit n seconds after start (Docker's restart policy then
 * restarts it: a crash loop), READY_AFTER/HEALTH_GRACE make the health check pass only late.
 * `/cgi-bin/slow` answers the page after 20 s: a request still running when a release switches.
 */
export const RELEASE_COMPOSE = `services:
  web:
    image: ${TEST_IMAGE}
    command:
      - sh
      - -c
      - |
        mkdir -p /tmp/site/cgi-bin && echo release-\${VERSION} > /tmp/site/index.html
        echo '#!/bin/sh' > /tmp/site/cgi-bin/slow
        echo 'echo Content-Type: text/plain; echo; sleep 20; cat /tmp/site/index.html' >> /tmp/site/cgi-bin/slow
        chmod +x /tmp/site/cgi-bin/slow
        httpd -p 8080 -h /tmp/site
        (sleep \${READY_AFTER}; touch /tmp/ready) &
        if [ \${CRASH_AFTER} -gt 0 ]; then sleep \${CRASH_AFTER}; exit 3; fi
        exec sleep 2147483647
    ports: ["8080"]
    healthcheck:
      test: ["CMD-SHELL", "test -f /tmp/ready && test '\${FAIL}' != 1 && wget -qO /dev/null http://127.0.0.1:8080/"]
      interval: 1s
      timeout: 2s
      retries: 2
      start_period: \${HEALTH_GRACE}
`;

export interface ReleaseVariables {
  VERSION: string;
  FAIL?: '0' | '1';
  CRASH_AFTER?: string;
  READY_AFTER?: string;
  HEALTH_GRACE?: string;
}

/** Every variable the compose names, so a PATCH always states the whole release. */
export function releaseVariables(input: ReleaseVariables): Record<string, string> {
  return {
    FAIL: '0',
    CRASH_AFTER: '0',
    READY_AFTER: '0',
    HEALTH_GRACE: '0s',
    ...input,
  };
}

export type Api = ReturnType<typeof apiClient>;

/** An operator of a fresh customer, with an API key, as a CI pipeline holds one. */
export async function operatorApi(
  stack: Stack,
  label: string,
): Promise<{ api: Api; customerId: string; email: string; key: string }> {
  const stamp = `${label}-${Date.now().toString(36)}`;
  const customerId = (await stack.cli('customers', 'create', '--name', stamp)).id as string;
  const email = `${stamp}@e2e.test`;
  await stack.cli(
    'users',
    'create',
    '--email',
    email,
    '--name',
    label,
    '--role',
    'operator',
    '--customer',
    customerId,
  );
  const key = (await stack.cli('api-keys', 'create', '--email', email, '--name', label)).key as string;
  return { api: apiClient(stack.apiUrl, key), customerId, email, key };
}

export interface DeploymentView {
  id: string;
  status: string;
  step: string | null;
  trigger: string;
  error: string | null;
  rollback_of?: string | null;
  image_digests?: Record<string, string> | null;
}

export async function waitDeployment(api: Api, id: string): Promise<DeploymentView> {
  const reply = await api.get<DeploymentView>(`/api/deployments/${id}?wait=180`);
  if (reply.status !== 200) throw new Error(`GET /api/deployments/${id} answered ${reply.status}`);
  return reply.body;
}

/**
 * Creates a service running RELEASE_COMPOSE with `variables` under a fresh `<prefix>-…` name and
 * returns its id, its public host name and its first deployment (not waited for).
 */
export async function createReleaseService(
  api: Api,
  customerId: string,
  prefix: string,
  variables: ReleaseVariables,
): Promise<{ id: string; host: string; deploymentId: string }> {
  const name = `${prefix}-${Date.now().toString(36)}`;
  const created = await api.post<{ id: string; deploy_job_id: string }>('/api/services', {
    name,
    customer_id: customerId,
    deploy_method: 'compose',
    compose: RELEASE_COMPOSE,
    variables: releaseVariables(variables),
  });
  if (created.status !== 201)
    throw new Error(`POST /api/services answered ${created.status}: ${JSON.stringify(created.body)}`);
  return { id: created.body.id, host: `${name}.${APPS_DOMAIN}`, deploymentId: created.body.deploy_job_id };
}

/** PATCH the variables (which redeploys) and return the new deployment's id. */
export async function release(api: Api, serviceId: string, variables: ReleaseVariables): Promise<string> {
  const reply = await api.request<{ deploy_job_id: string }>('PATCH', `/api/services/${serviceId}`, {
    variables: releaseVariables(variables),
  });
  if (reply.status !== 200)
    throw new Error(
      `PATCH /api/services/${serviceId} answered ${reply.status}: ${JSON.stringify(reply.body)}`,
    );
  return reply.body.deploy_job_id;
}

/** The service's status once no deployment holds it in `deploying`. */
export async function settledStatus(api: Api, serviceId: string): Promise<string> {
  const detail = await eventually(
    async () => (await api.get<{ status: string }>(`/api/services/${serviceId}`)).body,
    (body) => body.status !== 'deploying',
  );
  return detail.status;
}

/**
 * The service's units grouped by release (a set per deployment). On Swarm the tasks Swarm wants
 * running: after a rolled-back update they carry the previous release's labels again.
 */
async function releaseSets(serviceId: string, runtime: Runtime): Promise<Map<string, string[]>> {
  const sets = new Map<string, string[]>();
  for (const unit of await unitsOf(serviceId, runtime))
    sets.set(unit.deploymentId, [...(sets.get(unit.deploymentId) ?? []), unit.state]);
  return sets;
}

/** Waits until exactly one set is left and returns its deployment id (the project's runtime by default). */
export async function soleSet(serviceId: string, runtime: Runtime = E2E_RUNTIME): Promise<string> {
  const sets = await eventually(
    () => releaseSets(serviceId, runtime),
    (found) => found.size === 1,
  );
  return [...sets.keys()][0]!;
}
