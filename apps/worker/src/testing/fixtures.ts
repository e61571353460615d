import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkerConfigSchema, loadConfig, type WorkerConfig } from '@hostctl/config';
import { createDb, keyringFromEnvironment, type Db } from '@hostctl/db';
import { isFinalDeployment } from '@hostctl/domain';
import { pino } from 'pino';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './test-env.js';

/**
 * Test data created the way the API creates it (service + queued deployment + started event in
 * one transaction), so the worker sees exactly what it sees in production.
 */
export function testConfig(prefix: string, overrides: Record<string, string> = {}): WorkerConfig {
  return loadConfig(WorkerConfigSchema, {
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    // The dev stack's key (scripts/lib/env.sh): the test database's data keys are wrapped with it.
    SECRETS_KEK: process.env.SECRETS_KEK ?? '',
    SECRETS_KEK_ID: process.env.SECRETS_KEK_ID ?? 'k1',
    WORKER_HEALTH_PORT: '0',
    WORKER_CONCURRENCY: '2',
    DEPLOY_TIMEOUT_MS: '60000',
    LOG_LEVEL: 'silent',
    // Health and usage sweeps would add events and columns other tests assert exactly; the
    // observer tests call runOnce() themselves.
    HEALTH_INTERVAL_MS: '3600000',
    RESOURCE_INTERVAL_MS: '3600000',
    // As in the dev stack's env (scripts/lib/env.sh): the local base images and the test registry.
    PLATFORM_IMAGES: 'local/*',
    REGISTRY_ALLOWED_HOSTS: '127.0.0.1:5000',
    // Short cutover windows: tests that are about them set their own.
    RELEASE_STABILIZATION_MS: '300',
    RELEASE_DRAIN_MS: '200',
    ...overrides,
  });
}

export const silentLogger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

export function uniquePrefix(label: string): string {
  return `test-worker-${label}-${randomUUID().slice(0, 8)}`;
}

export function createTestDb(): Db {
  return createDb({ url: TEST_DATABASE_URL, max: 4, keys: keyringFromEnvironment(process.env) });
}

export interface CreatedService {
  serviceId: string;
  deploymentId: string;
  customerId: string;
}

export async function createComposeService(
  db: Db,
  input: {
    compose: string;
    variables?: Record<string, string>;
    /** Which of `variables` are secret (name → when set), as the API stores secret_variables. */
    secretNames?: Record<string, string>;
    deployMethod?: 'compose' | 'template' | 'git' | 'ai';
    /** Variable groups of the service's customer, attached in this order (docs/secrets.md#variable-groups). */
    variableGroups?: { variables: Record<string, string>; secretNames?: Record<string, string> }[];
  },
): Promise<CreatedService> {
  const suffix = randomUUID().slice(0, 8);
  return db.$transaction(async (tx) => {
    const customer = await tx.customer.create({ data: { name: `worker-test-${suffix}` } });
    const service = await tx.service.create({
      data: {
        name: `svc-${suffix}`,
        customerId: customer.id,
        status: 'deploying',
        deployMethod: input.deployMethod ?? 'compose',
        compose: input.compose,
        variables: input.variables ?? {},
        secretNames: input.secretNames ?? {},
        url: `http://svc-${suffix}.apps.localhost`,
      },
    });
    for (const [position, group] of (input.variableGroups ?? []).entries()) {
      const { id: groupId } = await tx.variableGroup.create({
        data: {
          customerId: customer.id,
          name: `group-${suffix}-${position}`,
          variables: group.variables,
          secretNames: group.secretNames ?? {},
        },
      });
      await tx.serviceVariableGroup.create({ data: { serviceId: service.id, groupId, position } });
    }
    const deployment = await tx.deployment.create({ data: { serviceId: service.id, trigger: 'create' } });
    await tx.serviceEvent.create({
      data: { serviceId: service.id, type: 'deploy', status: 'started', message: 'Deployment queued' },
    });
    return { serviceId: service.id, deploymentId: deployment.id, customerId: customer.id };
  });
}

/** A queued redeploy, as the API queues one; with `commit`, pinned to it as a push webhook's is. */
export async function createRedeployment(db: Db, serviceId: string, commit?: string): Promise<string> {
  return db.$transaction(async (tx) => {
    await tx.service.update({ where: { id: serviceId }, data: { status: 'deploying' } });
    const pinned = commit ? { requestedCommit: commit, commit } : {};
    const deployment = await tx.deployment.create({ data: { serviceId, trigger: 'redeploy', ...pinned } });
    await tx.serviceEvent.create({
      data: { serviceId, type: 'redeploy', status: 'started', message: 'Redeploy queued' },
    });
    return deployment.id;
  });
}

export async function waitForDeployment(db: Db, deploymentId: string, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const deployment = await db.deployment.findUniqueOrThrow({ where: { id: deploymentId } });
    if (isFinalDeployment(deployment.status)) return deployment;
    if (Date.now() > deadline)
      throw new Error(`deployment ${deploymentId} still ${deployment.status} (step ${deployment.step})`);
    await sleep(100);
  }
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** GET to a container address (a container these tests created) or loopback. */
export function httpGet(host: string, port: number, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host, port, path, timeout: 3000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}

export async function deleteServiceRows(db: Db, created: CreatedService[]): Promise<void> {
  for (const item of created) {
    await db.service.deleteMany({ where: { id: item.serviceId } });
    await db.variableGroup.deleteMany({ where: { customerId: item.customerId } });
    await db.customer.deleteMany({ where: { id: item.customerId } });
  }
}
