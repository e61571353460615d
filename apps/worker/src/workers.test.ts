// The worker side of the job catalog: every job is dispatched to its handler only after its
// payload passed the catalog's schema; anything else fails once, permanently, and the next job
// still runs. Real Redis and BullMQ; the handlers are recording fakes.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, type Job, type Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidJobPayloadError, QUEUES, createProducer, createRedis, type QueueName } from '@hostctl/queue';
import { silentLogger } from './testing/fixtures.js';
import { TEST_REDIS_URL } from './testing/test-env.js';
import { createWorkers, type Processors } from './workers.js';

const prefix = `catalog-${randomUUID().slice(0, 8)}`;
const connection = createRedis(TEST_REDIS_URL, 'worker');
const calls: { name: string; data: unknown }[] = [];
const record = (name: string) => async (job: Job) => {
  calls.push({ name, data: job.data });
  return { ok: true };
};
const processors: Processors = {
  deploy: record('deploy'),
  delete: record('delete'),
  lifecycle: record('lifecycle'),
  'node-availability': record('node-availability'),
  notify: record('notify'),
  run: record('run'),
  backup: record('backup'),
  restore: record('restore'),
  verify: record('verify'),
  exec: record('exec'),
};
let workers: Worker[] = [];
const queues = new Map<QueueName, Queue>();
const queue = (name: QueueName) => {
  if (!queues.has(name)) queues.set(name, new Queue(name, { connection, prefix }));
  return queues.get(name)!;
};

beforeAll(async () => {
  workers = createWorkers({ connection, prefix, concurrency: 1, processors, logger: silentLogger });
  for (const worker of workers) void worker.run();
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
});

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.close()));
  for (const q of queues.values()) {
    await q.obliterate({ force: true });
    await q.close();
  }
  connection.disconnect();
});

/** Adds a job the way an old release or a hand-made script could, bypassing the producer. */
async function settle(queueName: QueueName, name: string, data: unknown, attempts = 5) {
  const job = await queue(queueName).add(name, data, { attempts, backoff: { type: 'fixed', delay: 10 } });
  for (let i = 0; i < 200; i++) {
    const state = await queue(queueName).getJobState(job.id!);
    // Read the job after it settled: a copy read before holds no failedReason yet.
    if (state === 'completed' || state === 'failed')
      return { state, job: (await queue(queueName).getJob(job.id!))! };
    await sleep(50);
  }
  throw new Error(`job ${name} did not settle`);
}

describe('job catalog in the worker', () => {
  it.each([
    ['a deployment id that is not a UUID', { deploymentId: 'not-a-uuid' }],
    ['a missing id', {}],
    ['an extra field', { deploymentId: randomUUID(), image: 'x' }],
    ['no object at all', 'deploy everything'],
  ])('fails a deploy job with %s once, permanently, without running its handler', async (_, data) => {
    calls.length = 0;
    const { state, job } = await settle(QUEUES.deployments, 'deploy', data);
    expect(state).toBe('failed');
    expect(job.failedReason).toMatch(/invalid deploy job payload/);
    expect(job.attemptsMade).toBe(1);
    expect(calls).toEqual([]);
  });

  it('fails a job on the wrong queue and one the catalog does not know', async () => {
    calls.length = 0;
    const wrongQueue = await settle(QUEUES.deployments, 'lifecycle', {
      serviceId: randomUUID(),
      action: 'stop',
    });
    expect(wrongQueue.job.failedReason).toMatch(/unknown job lifecycle on the deployments queue/);
    const unknown = await settle(QUEUES.operations, 'format-disk', {});
    expect(unknown.job.failedReason).toMatch(/unknown job format-disk/);
    expect(calls).toEqual([]);
  });

  it('runs valid jobs of every kind with their payloads', async () => {
    calls.length = 0;
    const deploymentId = randomUUID();
    const serviceId = randomUUID();
    expect((await settle(QUEUES.deployments, 'deploy', { deploymentId })).state).toBe('completed');
    expect((await settle(QUEUES.deployments, 'delete', { serviceId })).state).toBe('completed');
    expect((await settle(QUEUES.operations, 'lifecycle', { serviceId, action: 'restart' })).state).toBe(
      'completed',
    );
    expect(calls).toEqual([
      { name: 'deploy', data: { deploymentId } },
      { name: 'delete', data: { serviceId } },
      { name: 'lifecycle', data: { serviceId, action: 'restart' } },
    ]);
  });

  it('keeps with each job the replica that ran it (host and process id)', async () => {
    const { job } = await settle(QUEUES.deployments, 'deploy', { deploymentId: randomUUID() });
    expect(job.processedBy).toBe(`${hostname()}:${process.pid}`);
  });
});

describe('job catalog in the producer', () => {
  it('refuses an invalid payload before anything reaches Redis', async () => {
    const producer = createProducer(connection, prefix);
    const before = await producer.queue(QUEUES.operations).count();
    await expect(
      producer.enqueue('lifecycle', { serviceId: randomUUID(), action: 'explode' } as never),
    ).rejects.toBeInstanceOf(InvalidJobPayloadError);
    await expect(producer.enqueue('deploy', { deploymentId: '../../x' })).rejects.toThrow(/deploymentId/);
    expect(await producer.queue(QUEUES.operations).count()).toBe(before);
    await producer.close();
  });
});
