import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, keyringFromEnvironment, type Db } from '@hostctl/db';
import { eventually } from './client.js';
import { E2E_DATABASE_URL, TEST_IMAGE, runtimeEnv } from './env.js';
import { operatorApi, waitDeployment, type Api } from './release-fixtures.js';
import { startStack, type Stack } from './stack.js';
import { isReady, openTerminal } from './terminal-client.js';
import { nothingLeftOf, runningUnitsOf, swarmContainersOf } from './workloads.js';

/**
 * Issue 32 item 5, the terminal under RUNTIME=swarm (docs/jobs.md#swarm), through the real API, a
 * worker on the swarm engine and the engine itself: the exec opens in the container of a running
 * task of the component (found through the manager's task list, opened on its node's engine),
 * echoes its input and ends with the command's exit code; with no task running (the service
 * stopped), the terminal closes 4409 with the reason in its error frame instead of waiting.
 */
const COMPOSE = `services:
  web:
    image: ${TEST_IMAGE}
    command: ["sh", "-c", "mkdir -p /tmp/site && echo hi > /tmp/site/index.html && exec httpd -f -p 8080 -h /tmp/site"]
    ports: ["8080"]
`;

let stack: Stack;
let owner: { api: Api; email: string; customerId: string };
let execKey = '';
let serviceId = '';
let db: Db;

beforeAll(async () => {
  db = createDatabase({ url: E2E_DATABASE_URL, keys: keyringFromEnvironment(process.env) }).db;
  stack = await startStack({ extraEnv: runtimeEnv('swarm') });
  owner = await operatorApi(stack, 'swarm-exec');
  execKey = (
    await stack.cli('api-keys', 'create', '--email', owner.email, '--name', 'exec', '--actions', 'exec')
  ).key as string;
  const created = await owner.api.post<{ id: string; deploy_job_id: string }>('/api/services', {
    name: `swarm-exec-${Date.now().toString(36)}`,
    customer_id: owner.customerId,
    deploy_method: 'compose',
    compose: COMPOSE,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  serviceId = created.body.id;
  expect((await waitDeployment(owner.api, created.body.deploy_job_id)).status).toBe('succeeded');
}, 300_000);

afterAll(async () => {
  if (serviceId) {
    await owner?.api.delete(`/api/services/${serviceId}`);
    // Its Swarm services, tasks, containers and overlay network go with it.
    await nothingLeftOf(serviceId, 'swarm');
  }
  await stack?.stop();
  await db?.$disconnect();
});

describe('a terminal under Swarm', () => {
  it('opens in the running task’s container, echoes input and ends with the exit code', async () => {
    const [task] = await runningUnitsOf(serviceId, 'swarm');
    const [container] = await swarmContainersOf(serviceId);
    expect(task && container, 'one running task and its container').toBeTruthy();
    const command = ['sh', '-c', 'read x; echo "got:$x on $(hostname)"; exit 4'];
    const terminal = await openTerminal(stack.apiUrl, execKey, serviceId, command);
    await terminal.waitFor(isReady);
    // Docker's own name of the task's container (`<swarm service>.<slot>.<task id>`).
    expect(terminal.frames.find((frame) => frame.type === 'ready')).toEqual({
      type: 'ready',
      container: container!.name,
    });
    expect(container!.name.endsWith(`.${task!.id}`)).toBe(true);
    terminal.socket.send(JSON.stringify({ type: 'resize', cols: 100, rows: 30 }));
    terminal.socket.send(JSON.stringify({ type: 'stdin', data: 'hello\r' }));
    await terminal.waitFor((frames) => frames.some((frame) => frame.type === 'exit'));
    // A container's hostname is its short id: the command ran in that very container.
    expect(terminal.output()).toContain(`got:hello on ${container!.id.slice(0, 12)}`);
    expect(terminal.frames.at(-1)).toEqual({ type: 'exit', exit_code: 4 });
    expect((await terminal.closed).code).toBe(1000);
    const session = await db.execSession.findFirst({ where: { serviceId }, orderBy: { createdAt: 'asc' } });
    expect(session).toMatchObject({ command, exitCode: 4, containerName: container!.name });
  });

  it('closes 4409 naming why when no task of the component runs', async () => {
    expect((await owner.api.post(`/api/services/${serviceId}/stop`)).body).toMatchObject({
      status: 'stopped',
    });
    await eventually(
      () => runningUnitsOf(serviceId, 'swarm'),
      (running) => running.length === 0,
    );
    const terminal = await openTerminal(stack.apiUrl, execKey, serviceId, ['sh']);
    const closed = await terminal.closed;
    expect(closed.code).toBe(4409);
    expect(terminal.frames.find((frame) => frame.type === 'error')).toMatchObject({
      detail: 'no task of component web is running',
    });
    expect(terminal.frames.some((frame) => frame.type === 'ready')).toBe(false);
    const session = await db.execSession.findFirst({
      where: { serviceId, exitCode: null },
      orderBy: { createdAt: 'desc' },
    });
    expect(session).toMatchObject({ error: 'no task of component web is running', containerName: null });
  });
});
