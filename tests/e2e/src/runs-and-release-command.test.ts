import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGE } from './env.js';
import { operatorApi, waitDeployment, type Api } from './release-fixtures.js';
import { hostctlProcess } from './cli-process.js';
import { startStack, type Stack } from './stack.js';
import { fetchFrom, runningUnitsOf } from './workloads.js';

/**
 * Issue 32 (docs/jobs.md) through the real API, worker and engine: one-off runs report the
 * command's exit code and output, `hostctl run` exits with it, a run never reaches another
 * customer's service, and a failing release command fails its deployment while the release
 * before it keeps serving.
 */

// The release command prints the release's own variable and exits with another: a bad release
// is one whose migration fails. $$ is compose's escape: the shell in the container expands it.
const COMPOSE = `services:
  web:
    image: ${TEST_IMAGE}
    command: ["sh", "-c", "mkdir -p /tmp/site && echo release-\${VERSION} > /tmp/site/index.html && exec httpd -f -p 8080 -h /tmp/site"]
    environment:
      VERSION: "\${VERSION}"
      MIGRATE_EXIT: "\${MIGRATE_EXIT}"
    ports: ["8080"]
    x-hostctl:
      release_command: ["sh", "-c", "echo migrating to $$VERSION; exit $$MIGRATE_EXIT"]
`;

interface RunView {
  id: string;
  status: string;
  exit_code: number | null;
  output: string;
  duration_ms: number | null;
  deployment_id: string | null;
}

let stack: Stack;
let a: { api: Api; customerId: string; key: string };
let b: { api: Api; key: string };
let serviceId = '';

const hostctl = (token: string, ...args: string[]) =>
  hostctlProcess({ apiUrl: stack.apiUrl, token }, ...args);

async function runToEnd(api: Api, command: string[]): Promise<RunView> {
  const accepted = await api.post<RunView>(`/api/services/${serviceId}/runs`, { command });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
  const done = await api.get<RunView>(`/api/runs/${accepted.body.id}?wait=120`);
  expect(done.status).toBe(200);
  return done.body;
}

async function page(): Promise<string> {
  const [unit] = await runningUnitsOf(serviceId);
  return (await fetchFrom(unit)).trim();
}

beforeAll(async () => {
  stack = await startStack();
  a = await operatorApi(stack, 'runs-a');
  b = await operatorApi(stack, 'runs-b');
  const created = await a.api.post<{ id: string; deploy_job_id: string }>('/api/services', {
    name: `runs-${Date.now().toString(36)}`,
    customer_id: a.customerId,
    deploy_method: 'compose',
    compose: COMPOSE,
    variables: { VERSION: '1', MIGRATE_EXIT: '0' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  serviceId = created.body.id;
  expect((await waitDeployment(a.api, created.body.deploy_job_id)).status).toBe('succeeded');
}, 300_000);

afterAll(async () => {
  if (serviceId) await a?.api.delete(`/api/services/${serviceId}`);
  await stack?.stop();
});

describe('one-off runs', () => {
  it('reports exit 0 and its output, with the release’s variables', async () => {
    const run = await runToEnd(a.api, ['sh', '-c', 'echo hello from $VERSION']);
    expect(run).toMatchObject({ status: 'succeeded', exit_code: 0, output: 'hello from 1\n' });
    expect(run.duration_ms).toBeGreaterThanOrEqual(0);
    expect(run.deployment_id).not.toBeNull();
  });

  it('reports exit 3 as a failed run with its output', async () => {
    const run = await runToEnd(a.api, ['sh', '-c', 'echo about to fail; exit 3']);
    expect(run).toMatchObject({ status: 'failed', exit_code: 3, output: 'about to fail\n' });
  });

  it('reaches the service’s components by name on its network', async () => {
    const run = await runToEnd(a.api, ['wget', '-qO-', 'http://web:8080/']);
    expect(run).toMatchObject({ exit_code: 0, output: 'release-1\n' });
  });

  it('lists the runs newest first, without their output', async () => {
    const list = await a.api.get<{ data: Record<string, unknown>[]; total: number }>(
      `/api/services/${serviceId}/runs?per_page=2`,
    );
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(3);
    expect(list.body.data.map((run) => run.exit_code)).toEqual([0, 3]);
    expect(list.body.data[0]).not.toHaveProperty('output');
  });

  it('hostctl run prints the output and exits with the command’s code', async () => {
    const ok = await hostctl(a.key, 'run', serviceId, '--', 'sh', '-c', 'echo cli says hi');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('cli says hi\n');
    const three = await hostctl(a.key, 'run', serviceId, '--', 'sh', '-c', 'echo failing; exit 3');
    expect(three.code, three.stderr).toBe(3);
    expect(three.stdout).toBe('failing\n');
    expect(three.stderr).toContain('exit code 3');
  });

  it('hostctl run prints the output as it is printed, then exits with the command’s code', async () => {
    const run = await hostctl(
      a.key,
      'run',
      serviceId,
      '--',
      'sh',
      '-c',
      'echo first; echo careful >&2; sleep 2; echo second; exit 3',
    );
    expect(run.code, run.stderr).toBe(3);
    // The command's stderr on the CLI's stderr: a `> file` of its stdout holds its stdout only.
    expect(run.stdout).toBe('first\nsecond\n');
    expect(run.stderr).toContain('careful\n');
    const runId = /run (\S+) of/.exec(run.stderr)?.[1] ?? '';
    const view = await a.api.get<RunView & { finished_at: string }>(`/api/runs/${runId}`);
    // The first line was on the CLI's stdout while the command still slept (2 s before its end).
    const first = run.arrivals.find((piece) => piece.text.includes('first'));
    expect(first?.text).not.toContain('second');
    expect(first!.at).toBeLessThan(Date.parse(view.body.finished_at) - 1000);
  });

  it('hostctl run keeps the CLI’s codes for usage and authentication', async () => {
    expect((await hostctl(a.key, 'run', serviceId)).code).toBe(2);
    expect((await hostctl('hsk_not_a_real_key_0123456789abcdef', 'run', serviceId, '--', 'true')).code).toBe(
      5,
    );
  });

  it('never reaches another customer’s service or run (404)', async () => {
    const post = await b.api.post(`/api/services/${serviceId}/runs`, { command: ['true'] });
    expect(post.status).toBe(404);
    const list = await b.api.get(`/api/services/${serviceId}/runs`);
    expect(list.status).toBe(404);
    const mine = await a.api.get<{ data: { id: string }[] }>(`/api/services/${serviceId}/runs`);
    const read = await b.api.get(`/api/runs/${mine.body.data[0]!.id}`);
    expect(read.status).toBe(404);
    const cli = await hostctl(b.key, 'run', serviceId, '--', 'true');
    expect(cli.code).not.toBe(0);
  });
});

describe('release command', () => {
  it('ran for the first release and is in its deployment log', async () => {
    const deployments = await a.api.get<{ data: { id: string }[] }>(`/api/services/${serviceId}/deployments`);
    const first = await a.api.get<{ logs: { message: string }[] }>(
      `/api/deployments/${deployments.body.data.at(-1)!.id}`,
    );
    expect(first.body.logs.map((line) => line.message)).toContain('release: migrating to 1');
  });

  it('a non-zero exit fails the deployment and the previous release keeps serving', async () => {
    expect(await page()).toBe('release-1');
    const patched = await a.api.request<{ deploy_job_id: string }>('PATCH', `/api/services/${serviceId}`, {
      variables: { VERSION: '2', MIGRATE_EXIT: '4' },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const deployment = await waitDeployment(a.api, patched.body.deploy_job_id);
    expect(deployment.status).toBe('failed');
    expect(deployment.error).toMatch(/release command exited with 4/);
    const log = await a.api.get<{ logs: { message: string }[] }>(`/api/deployments/${deployment.id}`);
    expect(log.body.logs.map((line) => line.message)).toContain('release: migrating to 2');
    expect(await page()).toBe('release-1');
    const service = await a.api.get<{ status: string }>(`/api/services/${serviceId}`);
    expect(service.body.status).toBe('running');
  });

  it('a zero exit lets the next release through', async () => {
    const patched = await a.api.request<{ deploy_job_id: string }>('PATCH', `/api/services/${serviceId}`, {
      variables: { VERSION: '3', MIGRATE_EXIT: '0' },
    });
    expect((await waitDeployment(a.api, patched.body.deploy_job_id)).status).toBe('succeeded');
    expect(await page()).toBe('release-3');
  });
});
