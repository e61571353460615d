import Docker from 'dockerode';
import { DEFAULT_CONTAINER_LIMITS } from '@hostctl/compose';
import { INSTANCE_LABEL, OWNER_LABEL, RUN_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { createRedis, runOutputStreamKey } from '@hostctl/queue';
import { afterAll, describe, expect, it } from 'vitest';
import { RUN_DEADLINE_LABEL } from './adapters/swarm-jobs.js';
import { createSwarmRuntime } from './adapters/swarm-runtime.js';
import {
  createComposeService,
  createRedeployment,
  waitFor,
  waitForDeployment,
  type CreatedService,
} from './testing/fixtures.js';
import { viaCaddy } from './testing/network-fixtures.js';
import { deploymentLog } from './testing/repository-fixtures.js';
import { TEST_IMAGE, TEST_REDIS_URL, swarmTestSocket } from './testing/test-env.js';
import { useSwarmWorkerApp } from './testing/swarm-worker-fixture.js';

// Runs and release commands under RUNTIME=swarm (docs/jobs.md#swarm), through the worker's own
// processors against the dev stack's swarm engine: each runs as a Swarm service in replicated-job
// mode built from the component's spec, its exit code read from the task, its output from the
// job's logs, and the job removed afterwards whatever happened.
const swarmEngine = new Docker({ socketPath: swarmTestSocket() });
const worker = useSwarmWorkerApp('swarm-runs', {
  env: { RELEASE_STABILIZATION_MS: '1000' },
  app: { observe: false, readiness: { timeoutMs: 60_000, stableMs: 300 } },
});
const { db, app } = worker;
const redis = createRedis(TEST_REDIS_URL, 'worker');
afterAll(() => redis.disconnect());

const compose = (release?: string) =>
  `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n` +
  (release ? `    x-hostctl:\n      release_command: ${release}\n` : '');

/** The installation's Swarm jobs of a run (or of every run): none once the run is over. */
const jobsOf = (runId?: string) =>
  swarmEngine.listServices({
    filters: {
      label: [`${INSTANCE_LABEL}=${worker.prefix}`, runId ? `${RUN_LABEL}=${runId}` : RUN_LABEL],
    },
  });

/**
 * What is left of a run's job on the swarm: its tasks (whose network attachments would keep the
 * service's overlay from being removed) and their containers. Swarm removes them asynchronously.
 */
async function leftoversOf(runId: string): Promise<string[]> {
  const tasks = (await swarmEngine.listTasks()) as {
    ID: string;
    Spec?: { ContainerSpec?: { Labels?: Record<string, string> } };
  }[];
  const containers = await swarmEngine.listContainers({
    all: true,
    filters: { label: [`${RUN_LABEL}=${runId}`] },
  });
  return [
    ...tasks
      .filter((task) => task.Spec?.ContainerSpec?.Labels?.[RUN_LABEL] === runId)
      .map((task) => `task ${task.ID}`),
    ...containers.map((container) => `container ${container.Id}`),
  ];
}

/** The run's job is gone at once, its task and container soon after. */
async function expectNothingLeftOf(runId: string) {
  expect(await jobsOf(runId)).toEqual([]);
  await waitFor(
    `the job of ${runId} to leave nothing`,
    async () => (await leftoversOf(runId)).length === 0,
    30_000,
  );
}

/** A job as a worker that died would have left it (its image runs nowhere: it need not). */
const leftoverJob = (runId: string, deadline: number): Docker.ServiceSpec => ({
  Name: `swarm-runs-leftover-${runId.slice(0, 8)}`,
  Labels: {
    [OWNER_LABEL]: 'true',
    [INSTANCE_LABEL]: worker.prefix,
    [RUN_LABEL]: runId,
    [RUN_DEADLINE_LABEL]: String(deadline),
  },
  TaskTemplate: {
    ContainerSpec: { Image: TEST_IMAGE, Args: ['true'], Labels: { [RUN_LABEL]: runId } },
    RestartPolicy: { Condition: 'none' },
  },
  Mode: { Replicated: { Replicas: 1 } },
});

async function runToEnd(serviceId: string, command: string[], timeoutSeconds = 60) {
  const run = await db.serviceRun.create({ data: { serviceId, command, timeoutSeconds } });
  await app.producer.enqueue('run', { runId: run.id });
  return waitFor(
    `run ${run.id} to end`,
    async () => {
      const row = await db.serviceRun.findUniqueOrThrow({ where: { id: run.id } });
      return ['succeeded', 'failed', 'timed_out'].includes(row.status) ? row : undefined;
    },
    120_000,
  );
}

describe('RUNTIME=swarm: runs and release commands as Swarm jobs', { timeout: 240_000 }, () => {
  let service: CreatedService;
  let host: string;

  it('deploys the service the runs belong to', async () => {
    service = worker.track(await createComposeService(db, { compose: compose() }));
    host = `${(await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).name}.apps.localhost`;
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    const deployment = await waitForDeployment(db, service.deploymentId, 120_000);
    expect(deployment.status, (await deploymentLog(db, service.deploymentId)).join('\n')).toBe('succeeded');
  });

  it('a run that exits 0 records its exit code and its output, stdout and stderr, and leaves no job', async () => {
    const run = await runToEnd(service.serviceId, ['sh', '-c', 'echo to stdout; echo to stderr >&2']);
    expect(run, run.error ?? '').toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(run.output).toContain('to stdout\n');
    expect(run.output).toContain('to stderr\n');
    // Streamed while it ran, each line on its stream, from the task's logs on the manager.
    const entries = (await redis.xrange(runOutputStreamKey(worker.prefix, run.id), '-', '+')).map(
      ([, flat]) =>
        Object.fromEntries(flat.flatMap((value, index) => (index % 2 ? [] : [[value, flat[index + 1]]]))),
    );
    expect(entries).toContainEqual(expect.objectContaining({ stream: 'stdout', message: 'to stdout\n' }));
    expect(entries).toContainEqual(expect.objectContaining({ stream: 'stderr', message: 'to stderr\n' }));
    expect(entries.at(-1)).toMatchObject({ end: 'succeeded', exit_code: '0' });
    await expectNothingLeftOf(run.id);
  });

  it('a run that exits 3 records exit code 3 and fails', async () => {
    const run = await runToEnd(service.serviceId, ['sh', '-c', 'echo about to fail; exit 3']);
    expect(run, run.error ?? '').toMatchObject({ status: 'failed', exitCode: 3, output: 'about to fail\n' });
    await expectNothingLeftOf(run.id);
  });

  it('a command that cannot start fails the run with 127 and why, never as succeeded', async () => {
    const run = await runToEnd(service.serviceId, ['/no/such/command']);
    // The job's init (tini, as on the single engine) says why and exits 127, as a shell would.
    expect(run, JSON.stringify(run)).toMatchObject({ status: 'failed', exitCode: 127 });
    expect(run.output).toContain('No such file or directory');
    await expectNothingLeftOf(run.id);
  });

  it('runs with the component’s memory limit and on its overlay network', async () => {
    // cgroup v1 on these engines (STACK-NOTES); the web component answers by name on the overlay.
    const run = await runToEnd(service.serviceId, [
      'sh',
      '-c',
      'cat /sys/fs/cgroup/memory/memory.limit_in_bytes; wget -qO- http://web:8080/',
    ]);
    expect(run.status, `${run.error ?? ''}\n${run.output}`).toBe('succeeded');
    const [limit, answer] = run.output.split('\n');
    expect(Number(limit)).toBe(DEFAULT_CONTAINER_LIMITS.defaultMemoryBytes);
    expect(answer).toBe('hello from busybox');
  });

  it('stops a run at its timeout, records timed_out with the output so far, and removes its job', async () => {
    const run = await runToEnd(service.serviceId, ['sh', '-c', 'echo started; sleep 600'], 2);
    expect(run).toMatchObject({ status: 'timed_out', exitCode: null, output: 'started\n' });
    expect(run.error).toMatch(/timeout of 2 s/);
    await expectNothingLeftOf(run.id);
  });

  it('a run cancelled while it runs (overlap policy replace) has its job removed', async () => {
    const run = await db.serviceRun.create({
      data: { serviceId: service.serviceId, command: ['sh', '-c', 'sleep 600'], timeoutSeconds: 300 },
    });
    await app.producer.enqueue('run', { runId: run.id });
    await waitFor('the run’s job to exist', async () => (await jobsOf(run.id)).length === 1, 60_000);
    // As the scheduler records a replaced run: the row turns final under the worker.
    await db.serviceRun.update({
      where: { id: run.id },
      data: { status: 'cancelled', finishedAt: new Date(), error: 'replaced by a newer run' },
    });
    await waitFor('the cancelled run’s job to go', async () => (await jobsOf(run.id)).length === 0, 30_000);
    await expectNothingLeftOf(run.id);
    expect((await db.serviceRun.findUniqueOrThrow({ where: { id: run.id } })).status).toBe('cancelled');
  });

  it('a run whose worker died mid-run is not run again, and its job is removed', async () => {
    const run = await db.serviceRun.create({
      data: {
        serviceId: service.serviceId,
        command: ['sh', '-c', 'echo ran twice'],
        timeoutSeconds: 60,
        status: 'running',
      },
    });
    await swarmEngine.createService(leftoverJob(run.id, Date.now() + 60_000));
    await app.producer.enqueue('run', { runId: run.id });
    const ended = await waitFor('the run to end', async () => {
      const row = await db.serviceRun.findUniqueOrThrow({ where: { id: run.id } });
      return row.status === 'failed' ? row : undefined;
    });
    expect(ended).toMatchObject({ exitCode: null, output: '' });
    expect(ended.error).toMatch(/the worker running the command stopped/);
    expect(await jobsOf(run.id)).toEqual([]);
  });

  it('a scheduled run takes the same path: the scheduler’s tick runs it as a Swarm job', async () => {
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const schedule = await db.serviceSchedule.create({
      data: {
        serviceId: service.serviceId,
        name: 'every-minute',
        cron: '* * * * *',
        timeZone: 'UTC',
        command: ['sh', '-c', 'echo scheduled; exit 5'],
        timeoutSeconds: 60,
        overlapPolicy: 'forbid',
        nextRunAt: minute,
      },
    });
    await app.scheduler.runOnce();
    const run = await waitFor(
      'the scheduled run to end',
      async () => {
        const row = await db.serviceRun.findFirst({ where: { scheduleId: schedule.id } });
        return row && ['succeeded', 'failed', 'timed_out'].includes(row.status) ? row : undefined;
      },
      90_000,
    );
    expect(run, run.error ?? '').toMatchObject({ status: 'failed', exitCode: 5, output: 'scheduled\n' });
    await db.serviceSchedule.update({ where: { id: schedule.id }, data: { enabled: false } });
    await expectNothingLeftOf(run.id);
  });

  it('a failing release command fails the deployment under Swarm and the old release keeps serving', async () => {
    await db.service.update({
      where: { id: service.serviceId },
      data: { compose: compose('["sh", "-c", "echo migrating; exit 4"]') },
    });
    const deploymentId = await createRedeployment(db, service.serviceId);
    await app.producer.enqueue('deploy', { deploymentId });
    const deployment = await waitForDeployment(db, deploymentId, 120_000);
    const log = (await deploymentLog(db, deploymentId)).join('\n');
    expect(deployment.status, log).toBe('failed');
    expect(log).toContain('release: migrating');
    expect(log).toMatch(/the release command exited with 4; the previous release keeps serving/);
    expect(await viaCaddy(host)).toEqual({ status: 200, body: 'hello from busybox\n' });
    await expectNothingLeftOf(deploymentId);
  });

  it('a release command that exits 0 lets the deployment go on', async () => {
    await db.service.update({
      where: { id: service.serviceId },
      data: { compose: compose('["sh", "-c", "echo migrated"]') },
    });
    const deploymentId = await createRedeployment(db, service.serviceId);
    await app.producer.enqueue('deploy', { deploymentId });
    const deployment = await waitForDeployment(db, deploymentId, 120_000);
    const log = (await deploymentLog(db, deploymentId)).join('\n');
    expect(deployment.status, log).toBe('succeeded');
    expect(log).toContain('release: migrated');
    await expectNothingLeftOf(deploymentId);
  });

  it('the reconciler’s sweep removes a job a dead worker left past its deadline', async () => {
    const runId = crypto.randomUUID();
    await swarmEngine.createService(leftoverJob(runId, Date.now() - 120_000));
    expect(await jobsOf(runId)).toHaveLength(1);
    // The sweep takes the reconciler's lease: another sweep may hold it for a moment.
    await waitFor('the reconciler to remove the leftover job', async () => {
      await app.reconciler.runOnce();
      return (await jobsOf(runId)).length === 0;
    });
  });

  it('a first deploy’s release command and later runs share the component’s volume', async () => {
    const stateful = worker.track(
      await createComposeService(db, {
        compose:
          `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n    volumes: ["data:/data"]\n` +
          `    x-hostctl:\n      release_command: ["sh", "-c", "echo migrated > /data/marker"]\n` +
          `volumes:\n  data: {}\n`,
      }),
    );
    await app.producer.enqueue('deploy', { deploymentId: stateful.deploymentId });
    const deployment = await waitForDeployment(db, stateful.deploymentId, 120_000);
    expect(deployment.status, (await deploymentLog(db, stateful.deploymentId)).join('\n')).toBe('succeeded');
    const run = await runToEnd(stateful.serviceId, ['cat', '/data/marker']);
    expect(run, run.error ?? '').toMatchObject({ status: 'succeeded', exitCode: 0, output: 'migrated\n' });
    await expectNothingLeftOf(run.id);
    await createSwarmRuntime({
      socketPath: swarmTestSocket(),
      instance: worker.prefix,
      timeoutMs: 30_000,
      monitorMs: 0,
    }).tearDown(stateful.serviceId);
  });

  it('leaves no Swarm job behind, nor anything that keeps the service’s overlay from going', async () => {
    expect(await jobsOf()).toEqual([]);
    const swarm = createSwarmRuntime({
      socketPath: swarmTestSocket(),
      instance: worker.prefix,
      timeoutMs: 30_000,
      monitorMs: 0,
    });
    // Throws while a network (or anything else) of the service remains.
    await swarm.tearDown(service.serviceId);
    const networks = await swarmEngine.listNetworks({
      filters: { label: [`${SERVICE_LABEL}=${service.serviceId}`] },
    });
    expect(networks).toEqual([]);
  });
});
