import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '@hostctl/testing';
import { createDatabase, keyringFromEnvironment, type Db } from '@hostctl/db';
import { E2E_DATABASE_URL, TEST_IMAGE } from './env.js';
import { operatorApi, waitDeployment, type Api } from './release-fixtures.js';
import { hostctlProcess } from './cli-process.js';
import { startStack, type Stack } from './stack.js';
import { isReady, openTerminal, type Terminal } from './terminal-client.js';
import { nothingLeftOf } from './workloads.js';

/** `hostctl` with piped stdin (not a TTY): what a script or CI step does. */
const hostctl = (token: string, input: string, ...args: string[]) =>
  hostctlProcess({ apiUrl: stack.apiUrl, token, input }, ...args);

/**
 * Issue 32 item 4 (docs/jobs.md#terminal) through the real API, worker and engine: a terminal echoes
 * its input and ends with the command's exit code; only an API key that names the exec action opens
 * one; another customer's service is a 404; revoking the key closes the socket; the per-service bound.
 */
const COMPOSE = `services:
  web:
    image: ${TEST_IMAGE}
    command: ["sh", "-c", "mkdir -p /tmp/site && echo hi > /tmp/site/index.html && exec httpd -f -p 8080 -h /tmp/site"]
    ports: ["8080"]
`;

let stack: Stack;
let a: { api: Api; customerId: string; email: string; key: string };
let execKeyA: { id: string; key: string };
let serviceId = '';
let db: Db;

async function keyFor(email: string, actions: string): Promise<{ id: string; key: string }> {
  const created = await stack.cli(
    'api-keys',
    'create',
    '--email',
    email,
    '--name',
    `k-${actions}`,
    '--actions',
    actions,
  );
  return { id: created.id as string, key: created.key as string };
}

/** Opens a terminal on this file's stack. */
const open = (key: string, id: string, cmd: string[] = []): Promise<Terminal> =>
  openTerminal(stack.apiUrl, key, id, cmd);

async function refusal(key: string, id: string): Promise<{ status: number; body: string }> {
  return open(key, id).then(
    (terminal) => {
      terminal.socket.close();
      return { status: 101, body: '' };
    },
    (error: { status?: number; body?: string }) => ({ status: error.status ?? 0, body: error.body ?? '' }),
  );
}

beforeAll(async () => {
  db = createDatabase({ url: E2E_DATABASE_URL, keys: keyringFromEnvironment(process.env) }).db;
  stack = await startStack({ extraEnv: { STREAM_RECHECK_MS: '300', EXEC_MAX_PER_SERVICE: '2' } });
  a = await operatorApi(stack, 'exec-a');
  execKeyA = await keyFor(a.email, 'exec');
  const created = await a.api.post<{ id: string; deploy_job_id: string }>('/api/services', {
    name: `exec-${Date.now().toString(36)}`,
    customer_id: a.customerId,
    deploy_method: 'compose',
    compose: COMPOSE,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  serviceId = created.body.id;
  expect((await waitDeployment(a.api, created.body.deploy_job_id)).status).toBe('succeeded');
}, 300_000);

afterAll(async () => {
  if (serviceId) {
    await a?.api.delete(`/api/services/${serviceId}`);
    // Before the stack's worker stops: under Swarm its services and overlay network go with it.
    await nothingLeftOf(serviceId);
  }
  await stack?.stop();
  await db?.$disconnect();
});

describe('the terminal', () => {
  it('echoes input through the TTY and ends with the command’s exit code', async () => {
    const terminal = await open(execKeyA.key, serviceId, ['sh', '-c', 'read x; echo got:$x; exit 4']);
    await terminal.waitFor(isReady);
    terminal.socket.send(JSON.stringify({ type: 'resize', cols: 100, rows: 30 }));
    terminal.socket.send(JSON.stringify({ type: 'stdin', data: 'hello\r' }));
    await terminal.waitFor((frames) => frames.some((f) => f.type === 'exit'));
    expect(terminal.output()).toContain('got:hello');
    expect(terminal.frames.at(-1)).toEqual({ type: 'exit', exit_code: 4 });
    expect((await terminal.closed).code).toBe(1000);
    const session = await db.execSession.findFirst({ where: { serviceId }, orderBy: { createdAt: 'asc' } });
    expect(session).toMatchObject({ command: ['sh', '-c', 'read x; echo got:$x; exit 4'], exitCode: 4 });
    // `hostctl-…-web-…` on the single engine, Docker's `hostctl-…-web.<slot>.<task>` under Swarm.
    expect(session?.containerName).toMatch(/-web[-.]/);
  });

  it('a deploy-only key, a key without limits and a viewer are refused (403)', async () => {
    const deployOnly = await keyFor(a.email, 'deploy');
    const refused = await refusal(deployOnly.key, serviceId);
    expect(refused.status).toBe(403);
    expect((await refusal(a.key, serviceId)).status).toBe(403);
    const viewerEmail = `exec-viewer-${Date.now().toString(36)}@e2e.test`;
    await stack.cli(
      'users',
      'create',
      '--email',
      viewerEmail,
      '--name',
      'v',
      '--role',
      'viewer',
      '--customer',
      a.customerId,
    );
    const viewerKey = (await stack.cli('api-keys', 'create', '--email', viewerEmail, '--name', 'v'))
      .key as string;
    expect((await refusal(viewerKey, serviceId)).status).toBe(403);
  });

  it('another customer’s service is a 404', async () => {
    const b = await operatorApi(stack, 'exec-b');
    const execKeyB = await keyFor(b.email, 'exec');
    expect((await refusal(execKeyB.key, serviceId)).status).toBe(404);
  });

  it('holds at most EXEC_MAX_PER_SERVICE terminals per service (429 naming the limit)', async () => {
    const first = await open(execKeyA.key, serviceId);
    const second = await open(execKeyA.key, serviceId);
    await first.waitFor(isReady);
    await second.waitFor(isReady);
    const third = await refusal(execKeyA.key, serviceId);
    expect(third.status).toBe(429);
    expect(third.body).toContain('EXEC_MAX_PER_SERVICE');
    first.socket.close();
    second.socket.close();
    await Promise.all([first.closed, second.closed]);
  });

  it('closes the socket when its key is revoked', async () => {
    const revocable = await keyFor(a.email, 'exec');
    // The slots of the sockets just closed go once their API side ended them.
    const deadline = Date.now() + 10_000;
    let terminal: Terminal | undefined;
    while (!terminal) {
      terminal = await open(revocable.key, serviceId).catch((error: { status?: number }) => {
        if (error.status !== 429 || Date.now() > deadline) throw error;
        return undefined;
      });
    }
    await terminal.waitFor(isReady);
    const revoked = await apiClient(stack.apiUrl, a.key).delete(`/api/auth/api-keys/${revocable.id}`);
    expect(revoked.status).toBeLessThan(300);
    const closed = await terminal.closed;
    expect(closed.code).toBe(4401);
  });

  it('hostctl exec relays piped input and exits with the remote exit code', async () => {
    const done = await hostctl(
      execKeyA.key,
      'hello\n',
      'exec',
      serviceId,
      '--',
      'sh',
      '-c',
      'read x; echo got:$x; exit 4',
    );
    expect(done.code, done.stderr).toBe(4);
    expect(done.stdout).toContain('got:hello');
  });

  it('hostctl exec: 5 for a key without the exec action, 2 without SERVICE', async () => {
    const refused = await hostctl(a.key, '', 'exec', serviceId);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('exec action');
    expect((await hostctl(execKeyA.key, '', 'exec')).code).toBe(2);
  });
});
