import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { createRedis } from '@hostctl/queue';
import { redisDump } from '@hostctl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { E2E_DATABASE_URL, REDIS_URL, TEST_IMAGE } from './env.js';
import { startNotificationReceiver, type NotificationReceiver } from './notification-receiver.js';
import { operatorApi, waitDeployment, type Api } from './release-fixtures.js';
import { startStack, type Stack } from './stack.js';

/**
 * Issue 30's acceptance, as an operator's support engineer or a thief of a backup would look:
 * distinct values planted in a service (plain and secret), a variable group (secret) and a
 * rollback's history, through the real API and worker, with a release command that prints them
 * into the deploy log and a subscription that puts deployments into the outbox. Then a `pg_dump`
 * of the database (audit log, outbox, deploy logs, releases included), every Redis key of the
 * installation, the whole output of the API and the worker at debug level, and the deploy logs
 * the API answers: no planted value is in any of them (docs/secrets.md#threat-model).
 */
const run = promisify(execFile);
const planted = (what: string) => `planted-${what}-${randomUUID()}`;
const PLANTED = {
  firstSecret: planted('first-secret'),
  rotatedSecret: planted('rotated-secret'),
  lastSecret: planted('last-secret'),
  plain: planted('plain'),
  groupSecret: planted('group-secret'),
};

// The release command prints every variable it is given: the deploy log must hold them masked.
const COMPOSE = `services:
  web:
    image: ${TEST_IMAGE}
    command: ["httpd", "-f", "-p", "8080", "-h", "/"]
    ports: ["8080"]
    environment:
      DB_PASSWORD: \${DB_PASSWORD}
      PLAIN: \${PLAIN}
      SMTP_PASSWORD: \${SMTP_PASSWORD}
    x-hostctl:
      release_command: ["sh", "-c", "echo db=$$DB_PASSWORD plain=$$PLAIN smtp=$$SMTP_PASSWORD"]
`;

let stack: Stack;
let api: Api;
let receiver: NotificationReceiver;
let serviceId = '';
const deployments: string[] = [];

async function settled(id: string): Promise<void> {
  deployments.push(id);
  expect((await waitDeployment(api, id)).status).toBe('succeeded');
}

beforeAll(async () => {
  stack = await startStack({
    keepAllOutput: true,
    extraEnv: { LOG_LEVEL: 'debug', NOTIFICATION_ALLOWED_HOSTS: '127.0.0.1:32768-60999' },
  });
  api = (await operatorApi(stack, 'planted')).api;
  receiver = await startNotificationReceiver();
  const subscription = await api.post<{ secret: string }>('/api/notification-subscriptions', {
    url: receiver.url,
    events: ['deployment.succeeded', 'deployment.failed'],
  });
  expect(subscription.status, JSON.stringify(subscription.body)).toBe(201);
  receiver.secret = subscription.body.secret;
}, 300_000);

afterAll(async () => {
  if (serviceId) await api.delete(`/api/services/${serviceId}`).catch(() => undefined);
  await receiver?.close();
  await stack?.stop();
});

describe('planted secrets through the real API and worker', { timeout: 600_000 }, () => {
  it('appear in no pg_dump, Redis key, API or worker output, audit row, outbox row or deploy log', async () => {
    const group = await api.post<{ id: string }>('/api/variable-groups', {
      name: `mail-${Date.now().toString(36)}`,
      secret_variables: { SMTP_PASSWORD: PLANTED.groupSecret },
    });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const created = await api.post<{ id: string; deploy_job_id: string }>('/api/services', {
      name: `planted-${Date.now().toString(36)}`,
      deploy_method: 'compose',
      compose: COMPOSE,
      variables: { PLAIN: PLANTED.plain },
      secret_variables: { DB_PASSWORD: PLANTED.firstSecret },
      variable_groups: [group.body.id],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    serviceId = created.body.id;
    const first = created.body.deploy_job_id;
    await settled(first);

    // Rotated, rolled back to the first release (its secret comes back), rotated for good: the
    // history now holds all three values.
    const rotate = async (value: string) => {
      const reply = await api.request<{ deploy_job_id: string }>('PATCH', `/api/services/${serviceId}`, {
        secret_variables: { DB_PASSWORD: value },
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      await settled(reply.body.deploy_job_id);
    };
    await rotate(PLANTED.rotatedSecret);
    const rollback = await api.post<{ deploy_job_id?: string; id?: string }>(
      `/api/services/${serviceId}/rollback`,
      { deployment_id: first },
    );
    expect(rollback.status, JSON.stringify(rollback.body)).toBe(200);
    await settled((rollback.body.deploy_job_id ?? rollback.body.id)!);
    await rotate(PLANTED.lastSecret);

    // The audited reveal: the audit row is written, without the value.
    const revealed = await api.post<{ value: string }>(`/api/services/${serviceId}/secret-variables/reveal`, {
      name: 'DB_PASSWORD',
    });
    expect(revealed.body.value).toBe(PLANTED.lastSecret);
    await receiver.waitFor((n) => n.body.deployment?.id === deployments.at(-1));

    // Each place is looked at for real: this test's rows, keys, log lines and release output are in it.
    const { stdout: dump } = await run('pg_dump', ['--data-only', E2E_DATABASE_URL], {
      maxBuffer: 512 * 1024 * 1024,
    });
    expect(dump).toContain(serviceId);
    expect(dump).toMatch(/secret_variables\.reveal|secret-variables|reveal/);
    expect(dump).toContain('deployment.succeeded');
    const redis = createRedis(REDIS_URL, 'worker');
    const keys = await redisDump(redis, stack.env.QUEUE_PREFIX!).finally(() => redis.quit());
    expect(keys).toContain(first);
    const output = stack.logs();
    expect(output).toContain(serviceId);
    const logs: string[] = [];
    for (const id of deployments) {
      const reply = await api.get<{ logs: { message: string }[] }>(`/api/deployments/${id}`);
      logs.push(...reply.body.logs.map((line) => line.message));
    }
    // Every deployment but the rollback (which runs the stored release: docs/jobs.md#release-command).
    expect(logs.filter((line) => line.startsWith('release: db=')).length).toBe(deployments.length - 1);
    expect(logs).toContain('release: db=*** plain=*** smtp=***');

    for (const [what, value] of Object.entries(PLANTED)) {
      expect(dump.includes(value), `${what} in pg_dump`).toBe(false);
      expect(keys.includes(value), `${what} in Redis`).toBe(false);
      expect(output.includes(value), `${what} in the API's or worker's output`).toBe(false);
      expect(logs.join('\n').includes(value), `${what} in a deploy log`).toBe(false);
      expect(JSON.stringify(receiver.received).includes(value), `${what} in a notification`).toBe(false);
    }
  });
});
