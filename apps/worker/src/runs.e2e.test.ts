import { DEFAULT_CONTAINER_LIMITS } from '@hostctl/compose';
import { RUN_LABEL } from '@hostctl/domain';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { RUN_OUTPUT_MAX_BYTES } from './runs/one-off-container.js';
import { waitFor, waitForDeployment } from './testing/fixtures.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// One-off runs on the real engine (docs/jobs.md): the bounds the API cannot see. The worker runs
// the job exactly as the API hands it over: a row, then a `run` job with its id.
const worker = useWorkerApp('runs', {
  app: { readiness: { timeoutMs: 20_000, stableMs: 500 } },
});
const { db, runtime, app } = worker;
let serviceId = '';

beforeAll(async () => {
  const service = await worker.deploy({
    compose: 'services:\n  web:\n    image: local/busybox:1\n    command: ["sleep", "2147483647"]\n',
  });
  serviceId = service.serviceId;
  expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');
}, 120_000);

async function runToEnd(
  command: string[],
  timeoutSeconds = 60,
  status: 'queued' | 'running' = 'queued',
  service = serviceId,
) {
  const run = await db.serviceRun.create({ data: { serviceId: service, command, timeoutSeconds, status } });
  await app.producer.enqueue('run', { runId: run.id });
  return waitFor(
    `run ${run.id} to end`,
    async () => {
      const row = await db.serviceRun.findUniqueOrThrow({ where: { id: run.id } });
      return ['succeeded', 'failed', 'timed_out'].includes(row.status) ? row : undefined;
    },
    90_000,
  );
}

describe('one-off runs on the engine', () => {
  it('stops a run at its timeout, records timed_out, and leaves no container', async () => {
    const run = await runToEnd(['sh', '-c', 'echo started; sleep 600'], 1);
    expect(run).toMatchObject({ status: 'timed_out', exitCode: null, output: 'started\n' });
    expect(run.error).toMatch(/timeout of 1 s/);
    expect(await runtime.listContainers({ [RUN_LABEL]: run.id })).toEqual([]);
  });

  it('keeps only the end of a long output, cut at a line', async () => {
    // 40,000 numbered lines of ~10 bytes: more than the bound.
    const run = await runToEnd([
      'sh',
      '-c',
      'i=0; while [ $i -lt 40000 ]; do echo "line $i"; i=$((i+1)); done',
    ]);
    expect(run.status).toBe('succeeded');
    expect(run.outputTruncated).toBe(true);
    expect(Buffer.byteLength(run.output)).toBeLessThanOrEqual(RUN_OUTPUT_MAX_BYTES);
    expect(run.output.endsWith('line 39999\n')).toBe(true);
    expect(run.output.split('\n')[0]).toMatch(/^line \d+$/);
  });

  it('never runs a command a second time when its job comes back (the run is already running)', async () => {
    const run = await runToEnd(['sh', '-c', 'echo ran twice'], 60, 'running');
    expect(run).toMatchObject({ status: 'failed', exitCode: null, output: '' });
    expect(run.error).toMatch(/the worker running the command stopped/);
  });

  it('runs with the memory limit of the component’s containers (the default here)', async () => {
    // cgroup v1 on these engines (docs: STACK-NOTES); an unlimited container reads about 2^63.
    const run = await runToEnd(['cat', '/sys/fs/cgroup/memory/memory.limit_in_bytes']);
    expect(run.status, run.output).toBe('succeeded');
    expect(Number(run.output.trim())).toBe(DEFAULT_CONTAINER_LIMITS.defaultMemoryBytes);
  });
});

describe('secret values in a run’s output', () => {
  it('masks the service’s, its groups’ and its release’s secrets, as the application log does', async () => {
    const planted = () => `planted-${randomUUID()}`;
    const [secret, groupSecret, rotatedAway, plain] = [planted(), planted(), planted(), planted()];
    const marked = { SECRET: new Date().toISOString() };
    const service = await worker.deploy({
      compose:
        'services:\n  web:\n    image: local/busybox:1\n    command: ["sleep", "2147483647"]\n' +
        '    environment:\n      SECRET: ${SECRET}\n      GROUP_SECRET: ${GROUP_SECRET}\n      PLAIN: ${PLAIN}\n',
      variables: { SECRET: rotatedAway, PLAIN: plain },
      secretNames: marked,
      variableGroups: [
        { variables: { GROUP_SECRET: groupSecret }, secretNames: { GROUP_SECRET: new Date().toISOString() } },
      ],
    });
    expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');
    // Rotated without a redeploy: the release's containers (and so the run's) still hold the old value.
    await db.service.update({
      where: { id: service.serviceId },
      data: { variables: { SECRET: secret, PLAIN: plain }, secretNames: marked },
    });
    const run = await runToEnd(
      ['sh', '-c', 'echo "s=$SECRET g=$GROUP_SECRET p=$PLAIN"; echo "$SECRET" >&2'],
      60,
      'queued',
      service.serviceId,
    );
    expect(run.status, run.output).toBe('succeeded');
    // Plain values stay readable, as in the application log; each secret is masked wherever it appears.
    expect(run.output).toContain(`s=*** g=*** p=${plain}`);
    for (const value of [groupSecret, rotatedAway]) expect(run.output).not.toContain(value);
    // What the API answers is the stored row: read it back raw, as a dump would see it.
    const [stored] = await db.$queryRaw<
      { output: string }[]
    >`SELECT output FROM service_runs WHERE id = ${run.id}`;
    for (const value of [groupSecret, rotatedAway]) expect(stored?.output).not.toContain(value);
  });
});
