import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerTelemetry } from './docker-telemetry.js';

// The resource sampler's reads against the real engine: one-shot stats, CPU use averaged since
// the previous read (cpu-readings.ts). A container spinning on one core limited to half a CPU.
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const telemetry = createDockerTelemetry({ socketPath: '/var/run/docker.sock' });
let container: Docker.Container;

beforeAll(async () => {
  container = await docker.createContainer({
    name: `hostctl-test-usage-${randomUUID().slice(0, 8)}`,
    Image: 'local/busybox:1',
    Cmd: ['sh', '-c', 'while :; do :; done'],
    Labels: { 'io.hostctl.test': 'docker-telemetry-usage' },
    HostConfig: { NanoCpus: 500_000_000, Memory: 64 * 1024 * 1024, NetworkMode: 'none' },
  });
  await container.start();
});
afterAll(async () => {
  await container?.remove({ force: true });
});

describe('container usage on the real engine', () => {
  it('reads CPU use since the previous read, within the container’s limit, and its memory', async () => {
    const first = await telemetry.sampleUsage(container.id);
    expect(first).toMatchObject({ cpuPercent: 0, memoryLimitBytes: 64 * 1024 * 1024 });
    expect(first!.memoryBytes).toBeGreaterThan(0);
    await sleep(3000);
    const second = await telemetry.sampleUsage(container.id);
    // Busy on one core, held to half a CPU: up to 50 %, less when the host's cores are busy.
    expect(second!.cpuPercent).toBeGreaterThan(5);
    expect(second!.cpuPercent).toBeLessThanOrEqual(60);
  });

  it('answers null for a container that is gone', async () => {
    expect(await telemetry.sampleUsage(`missing-${randomUUID()}`)).toBeNull();
  });
});
