import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { COMPONENT_LABEL, OWNER_LABEL, SERVICE_LABEL, INSTANCE_LABEL } from '@hostctl/domain';
import { createRedis, serviceLogStreamKey } from '@hostctl/queue';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createDockerRuntime } from '../adapters/docker-runtime.js';
import { createDockerTelemetry } from '../adapters/docker-telemetry.js';
import { type ContainerSpec } from '../adapters/runtime.js';
import { silentLogger, uniquePrefix, waitFor } from '../testing/fixtures.js';
import { TEST_IMAGE, TEST_REDIS_URL } from '../testing/test-env.js';
import { MAX_LINE_BYTES, TRUNCATION_MARKER } from './log-lines.js';
import { createLogShipper, type LogShipper } from './log-shipper.js';

// Real Docker engine and Redis: containers print, shippers ship, the streams are read back.
const prefix = uniquePrefix('logs');
const redis = createRedis(TEST_REDIS_URL, 'worker');
const socketPath = '/var/run/docker.sock';
const runtime = createDockerRuntime({ socketPath });
const telemetry = createDockerTelemetry({ socketPath });
const containers: string[] = [];
const shippers: LogShipper[] = [];

const COUNTER = 'i=0; while true; do echo out $i; echo err $i >&2; i=$((i+1)); sleep 0.05; done';

function shipper(): LogShipper {
  const created = createLogShipper({
    redis,
    runtime,
    telemetry,
    instance: prefix,
    logger: silentLogger,
    leaseTtlMs: 2000,
    resyncMs: 2000,
  });
  shippers.push(created);
  created.start();
  return created;
}

async function startContainer(
  serviceId: string,
  script: string,
  restart: ContainerSpec['restart'] = { name: 'no' },
): Promise<string> {
  const id = await runtime.createContainer({
    name: `${prefix}-${randomUUID().slice(0, 8)}`,
    image: TEST_IMAGE,
    command: ['sh', '-c', script],
    env: [],
    labels: {
      [OWNER_LABEL]: 'true',
      [INSTANCE_LABEL]: prefix,
      [SERVICE_LABEL]: serviceId,
      [COMPONENT_LABEL]: 'app',
    },
    exposedPorts: [],
    init: true,
    restart,
    mounts: [],
    network: 'bridge',
    aliases: [],
  });
  containers.push(id);
  await runtime.startContainer(id);
  return id;
}

interface Entry {
  ts: string;
  stream: string;
  message: string;
}

async function entries(serviceId: string): Promise<Entry[]> {
  const rows = await redis.xrange(serviceLogStreamKey(prefix, serviceId), '-', '+');
  return rows.map(([, fields]) => {
    const map = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i]!, fields[i + 1]!);
    return { ts: map.get('ts')!, stream: map.get('stream')!, message: map.get('message')! };
  });
}

/** The counters a stream received, e.g. stdout `out 0`, `out 1`, …: in order, each once. */
function counters(list: Entry[], stream: 'stdout' | 'stderr'): number[] {
  const word = stream === 'stdout' ? 'out' : 'err';
  return list
    .filter((entry) => entry.stream === stream && entry.message.startsWith(`${word} `))
    .map((entry) => Number(entry.message.slice(4)));
}

function expectContiguous(numbers: number[]): void {
  expect(numbers.length).toBeGreaterThan(0);
  expect(numbers).toEqual(numbers.map((_, index) => numbers[0]! + index));
}

afterEach(async () => {
  await Promise.all(shippers.splice(0).map((s) => s.stop()));
});

afterAll(async () => {
  for (const id of containers) await runtime.removeContainer(id);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

describe('log shipper', () => {
  it('ships stdout and stderr lines with their stream within a second, long lines cut', async () => {
    const one = shipper();
    await waitFor('the lease', async () => one.isShipping, 5000);
    const serviceId = randomUUID();
    await startContainer(
      serviceId,
      "echo hello out; echo hello err >&2; head -c 20000 /dev/zero | tr '\\0' a; echo; sleep 3600",
    );
    const started = Date.now(); // the container runs: its first lines are being printed
    const list = await waitFor(
      'both streams',
      async () => {
        const found = await entries(serviceId);
        return found.length >= 3 ? found : null;
      },
      5000,
    );
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(1000);
    expect(list).toContainEqual(expect.objectContaining({ stream: 'stdout', message: 'hello out' }));
    expect(list).toContainEqual(expect.objectContaining({ stream: 'stderr', message: 'hello err' }));
    const long = list.find((entry) => entry.message.startsWith('aaa'));
    expect(long?.message).toBe('a'.repeat(MAX_LINE_BYTES) + TRUNCATION_MARKER);
    // Docker's own timestamp, as RFC 3339 with nanoseconds.
    expect(list[0]?.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
  });

  it('backfills what was printed while no shipper ran, exactly once', async () => {
    const first = shipper();
    await waitFor('the lease', async () => first.isShipping, 5000);
    const serviceId = randomUUID();
    await startContainer(serviceId, COUNTER);
    await waitFor('some lines', async () => (await entries(serviceId)).length >= 10, 5000);
    await first.stop();
    const atStop = counters(await entries(serviceId), 'stdout').at(-1)!;
    await sleep(1500); // the container keeps printing, nobody ships

    const second = shipper();
    await waitFor(
      'lines after the gap',
      async () => (counters(await entries(serviceId), 'stdout').at(-1) ?? 0) > atStop + 30,
      10_000,
    );
    const list = await entries(serviceId);
    expectContiguous(counters(list, 'stdout'));
    expectContiguous(counters(list, 'stderr'));
    expect(second.isShipping).toBe(true);
  });

  it('ships from one shipper per host; another takes over when it dies', async () => {
    const pair = [shipper(), shipper()];
    await waitFor('a leader', async () => pair.some((s) => s.isShipping), 5000);
    const serviceId = randomUUID();
    await startContainer(serviceId, COUNTER);
    await waitFor('some lines', async () => (await entries(serviceId)).length >= 20, 5000);
    expect(pair.filter((s) => s.isShipping)).toHaveLength(1);

    const leader = pair.find((s) => s.isShipping)!;
    const standby = pair.find((s) => s !== leader)!;
    const killedAt = Date.now();
    await leader.kill();
    await waitFor('the takeover', async () => standby.isShipping, 10_000);
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThan(5000);
    const before = (await entries(serviceId)).length;
    await waitFor('new lines', async () => (await entries(serviceId)).length > before + 20, 5000);
    const list = await entries(serviceId);
    expectContiguous(counters(list, 'stdout'));
    expectContiguous(counters(list, 'stderr'));
  });

  it('follows a container again each time Docker restarts it, without repeating lines', async () => {
    shipper();
    const serviceId = randomUUID();
    const id = await startContainer(serviceId, 'echo run; sleep 0.3; exit 1', {
      name: 'on-failure',
      maxRetries: 2,
    });
    await waitFor(
      'three runs',
      async () => (await runtime.inspectContainer(id))?.status === 'exited',
      20_000,
    );
    await waitFor(
      'every run shipped',
      async () => (await entries(serviceId)).filter((entry) => entry.message === 'run').length >= 3,
      5000,
    );
    await sleep(500);
    expect((await entries(serviceId)).map((entry) => entry.message)).toEqual(['run', 'run', 'run']);
  });

  it('keeps each stream capped', async () => {
    shipper();
    const serviceId = randomUUID();
    await startContainer(serviceId, 'seq 1 12000; sleep 3600');
    await waitFor(
      'the last line',
      async () => {
        const [last] = await redis.xrevrange(serviceLogStreamKey(prefix, serviceId), '+', '-', 'COUNT', 1);
        return last?.[1].includes('12000');
      },
      20_000,
    );
    const length = await redis.xlen(serviceLogStreamKey(prefix, serviceId));
    // MAXLEN ~ trims whole stream nodes (100 entries each), so the cap is approximate upward.
    expect(length).toBeGreaterThanOrEqual(10_000);
    expect(length).toBeLessThanOrEqual(10_200);
  });
});
