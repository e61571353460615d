import { describe, expect, it } from 'vitest';
import { fakeApi, problemBody, run, TOKEN, type Answer, type Handler } from '../test-support/fake-api.js';

const SERVICE = '3f1c2a4e-1111-4222-8333-444455556666';
const DEPLOYMENT = '9a8b7c6d-1111-4222-8333-444455556666';

const serviceRoutes: Record<string, Handler> = {
  'GET /api/services': [200, { data: [{ id: SERVICE, name: 'web' }], total: 1, page: 1, per_page: 100 }],
  [`POST /api/services/${SERVICE}/redeploy`]: [
    200,
    { id: SERVICE, status: 'deploying', deploy_job_id: DEPLOYMENT },
  ],
};

const deployment = (status: string, logs: [number, string][], step: string | null = null): Answer => [
  200,
  {
    id: DEPLOYMENT,
    service_id: SERVICE,
    status,
    step,
    error: status === 'failed' ? 'step start: container web exited (exit code 3)' : null,
    logs: logs.map(([seq, message]) => ({
      seq,
      timestamp: '2026-01-01T00:00:00Z',
      stream: 'stdout',
      message,
    })),
    last_seq: logs.at(-1)?.[0] ?? 0,
  },
];

/** Answers GET /api/deployments/:id with `sequence[call - 1]`, then its last entry forever. */
function deploymentSequence(...sequence: Answer[]): Handler {
  return (_url, call) => sequence[Math.min(call, sequence.length) - 1] as Answer;
}

function deployApi(...sequence: Answer[]) {
  return fakeApi({
    ...serviceRoutes,
    [`GET /api/deployments/${DEPLOYMENT}`]: deploymentSequence(...sequence),
  });
}

describe('deploy --wait', () => {
  it('streams the log to stderr in order, once, and exits 0 with the final deployment as JSON', async () => {
    const api = deployApi(
      deployment(
        'running',
        [
          [1, 'pulling local/busybox:1'],
          [2, 'creating web'],
        ],
        'create',
      ),
      deployment('succeeded', [[3, 'web is ready']], 'route'),
      deployment('succeeded', [], 'route'),
    );
    const result = await run(['deploy', 'web', '--wait', '--json'], api.fetchImpl);
    expect(result.code).toBe(0);
    expect(result.stderr.split('\n').filter((line) => !line.startsWith('hostctl:'))).toEqual([
      'pulling local/busybox:1',
      'creating web',
      'web is ready',
    ]);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed).toMatchObject({ id: DEPLOYMENT, status: 'succeeded' });
    expect(printed).not.toHaveProperty('logs');
    // Each read continues after the last line seen; the first waits, none waits past the poll.
    const reads = api.requests.filter((r) => r.url.pathname.startsWith('/api/deployments/'));
    expect(reads.map((r) => r.url.searchParams.get('after_seq'))).toEqual(['0', '2', '3']);
    expect(reads[0]?.url.searchParams.get('wait')).toBe('3');
    expect(api.requests.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(`${result.stdout}${result.stderr}`).not.toContain(TOKEN);
  });

  it.each([
    ['failed', 1],
    ['superseded', 4],
    ['cancelled', 4],
    ['rolled_back', 4],
  ])('exits %s → %d and says why', async (status, code) => {
    const api = deployApi(deployment(status, []));
    const result = await run(['deploy', 'web', '--wait'], api.fetchImpl);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(`deployment ${DEPLOYMENT} ${status}`);
    if (status === 'failed') expect(result.stderr).toContain('container web exited (exit code 3)');
  });

  it('stops waiting at the timeout with 3, saying the deployment goes on', async () => {
    const api = deployApi(deployment('running', [[1, 'building']], 'build'));
    const result = await run(['deploy', 'web', '--wait', '--timeout', '0', '--json'], api.fetchImpl);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('goes on (it is still running at step build)');
    expect(JSON.parse(result.stdout)).toMatchObject({ id: DEPLOYMENT, status: 'running' });
  });

  it('rides out a 503 and a dropped connection while waiting', async () => {
    const api = deployApi(
      [
        503,
        problemBody(503, 'dependency_unavailable', 'Service unavailable', 'PostgreSQL is unreachable'),
        { 'retry-after': '1' },
      ],
      [0],
      deployment('succeeded', []),
    );
    const result = await run(['deploy', 'web', '--wait'], api.fetchImpl);
    expect(result.code).toBe(0);
  });

  it('without --wait prints the deployment id and exits 0', async () => {
    const api = deployApi();
    const result = await run(['deploy', 'web', '--json'], api.fetchImpl);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      id: SERVICE,
      status: 'deploying',
      deploy_job_id: DEPLOYMENT,
    });
    expect(api.requests.find((r) => r.method === 'POST')?.idempotencyKey).toBeNull();
  });

  it('passes --idempotency-key on, so a retried pipeline gets the same deployment', async () => {
    const api = deployApi();
    const result = await run(['deploy', 'web', '--idempotency-key', 'run-42-1'], api.fetchImpl);
    expect(result.code).toBe(0);
    expect(api.requests.find((r) => r.method === 'POST')?.idempotencyKey).toBe('run-42-1');
  });
});

describe('errors become exit codes', () => {
  it.each([
    [401, 'unauthenticated', 'Unauthorized', 'the API key is revoked', 5],
    [403, 'forbidden', 'Forbidden', 'viewer may not services:operate', 5],
    [409, 'deployment_in_progress', 'Conflict', 'a deployment is running', 1],
  ])(
    'a %d problem prints title and detail and exits accordingly',
    async (status, code, title, detail, exit) => {
      const api = fakeApi({
        ...serviceRoutes,
        [`POST /api/services/${SERVICE}/redeploy`]: [status, problemBody(status, code, title, detail)],
      });
      const result = await run(['deploy', 'web', '--wait'], api.fetchImpl);
      expect(result.code).toBe(exit);
      expect(result.stderr).toContain(`${title}: ${detail} (request id req-1)`);
      expect(result.stderr).not.toContain(TOKEN);
    },
  );

  it('a refused connection is a clear message and exit 1', async () => {
    const api = fakeApi({ 'GET /api/services': [0] });
    const result = await run(['services', 'list'], api.fetchImpl);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'cannot reach the API at https://api.test (ECONNREFUSED); check HOSTCTL_URL',
    );
  });

  it('a proxy error page that is not JSON still reads as its status', async () => {
    const api = fakeApi({ 'GET /api/services': [502] });
    const result = await run(['services', 'list'], api.fetchImpl);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('502');
  });
});

describe('rollback and cancel', () => {
  it('rollback --to sends the target and waits like deploy', async () => {
    const api = fakeApi({
      ...serviceRoutes,
      [`POST /api/services/${SERVICE}/rollback`]: [
        200,
        { id: SERVICE, status: 'deploying', deploy_job_id: DEPLOYMENT },
      ],
      [`GET /api/deployments/${DEPLOYMENT}`]: deployment('succeeded', []),
    });
    const target = 'b1b2b3b4-1111-4222-8333-444455556666';
    const result = await run(['rollback', 'web', '--to', target, '--wait'], api.fetchImpl);
    expect(result.code).toBe(0);
    const post = api.requests.find((r) => r.url.pathname.endsWith('/rollback'));
    expect(JSON.parse(post?.body ?? '{}')).toEqual({ deployment_id: target });
  });

  it('rollback without --to sends no body', async () => {
    const api = fakeApi({
      ...serviceRoutes,
      [`POST /api/services/${SERVICE}/rollback`]: [
        200,
        { id: SERVICE, status: 'deploying', deploy_job_id: DEPLOYMENT },
      ],
    });
    expect((await run(['rollback', 'web'], api.fetchImpl)).code).toBe(0);
    expect(api.requests.find((r) => r.url.pathname.endsWith('/rollback'))?.body).toBeUndefined();
  });

  it('cancel of a final deployment reports the 409 and exits 1', async () => {
    const api = fakeApi({
      [`POST /api/deployments/${DEPLOYMENT}/cancel`]: [
        409,
        problemBody(409, 'conflict', 'Conflict', 'the deployment is already final (succeeded)'),
      ],
    });
    const result = await run(['cancel', DEPLOYMENT], api.fetchImpl);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('already final (succeeded)');
  });
});
