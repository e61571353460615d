import Docker from 'dockerode';
import { COMPONENT_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { beforeAll, describe, expect, it } from 'vitest';
import { execIn } from './testing/container-exec.js';
import { createComposeService, waitFor, waitForDeployment, type CreatedService } from './testing/fixtures.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// Tenant containers are limited by default, against the real engine: what Docker reports for a
// deployed container, and what a process inside it can and cannot do.
const { db, runtime, app, created } = useWorkerApp('limits', {
  env: { CONTAINER_DEFAULT_MEMORY_MB: '128', CONTAINER_DEFAULT_CPUS: '0.5', CONTAINER_DEFAULT_PIDS: '64' },
  app: { readiness: { timeoutMs: 20_000, stableMs: 500 } },
});
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const MIB = 1024 * 1024;

// `bomb` forks sleepers forever (each in a subshell, so a failed fork does not end the loop); only
// its pids limit stops it.
const COMPOSE = `services:
  web:
    image: local/busybox:1
    command: ["httpd", "-f", "-p", "8080", "-h", "/"]
    ports: ["8080"]
  bomb:
    image: local/busybox:1
    command: ["sh", "-c", "while :; do (sleep 100 &) 2>/dev/null; sleep 0.01; done"]
    deploy: {resources: {limits: {memory: 96M, cpus: "0.25", pids: 40}}}
`;

let service: CreatedService;
const inspectOf = async (component: string) => {
  const list = await runtime.listContainers({ [SERVICE_LABEL]: service.serviceId });
  const found = list.find((container) => container.labels[COMPONENT_LABEL] === component);
  if (!found) throw new Error(`no ${component} container`);
  return docker.getContainer(found.id).inspect();
};

const exec = async (component: string, cmd: string[]) => execIn(docker, (await inspectOf(component)).Id, cmd);

beforeAll(async () => {
  service = await createComposeService(db, { compose: COMPOSE });
  created.push(service);
  await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
  const deployment = await waitForDeployment(db, service.deploymentId);
  expect(deployment).toMatchObject({ status: 'succeeded' });
}, 120_000);

describe('container limits on the real engine', () => {
  it('a service that sets nothing gets the operator defaults, swap included in the limit', async () => {
    const { HostConfig } = await inspectOf('web');
    expect(HostConfig).toMatchObject({
      Memory: 128 * MIB,
      MemorySwap: 128 * MIB,
      NanoCpus: 500_000_000,
      PidsLimit: 64,
    });
  });

  it("a service's own deploy.resources.limits are applied", async () => {
    const { HostConfig } = await inspectOf('bomb');
    expect(HostConfig).toMatchObject({
      Memory: 96 * MIB,
      MemorySwap: 96 * MIB,
      NanoCpus: 250_000_000,
      PidsLimit: 40,
    });
  });

  it('the service row shows the limits that were applied (sums over containers)', async () => {
    const row = await db.service.findUniqueOrThrow({ where: { id: service.serviceId } });
    expect(row).toMatchObject({ memoryLimitMb: 128 + 96, cpuLimit: 0.75 });
  });

  it('every capability is dropped except the documented set, and privileges cannot be gained', async () => {
    for (const component of ['web', 'bomb']) {
      const { HostConfig } = await inspectOf(component);
      expect(HostConfig.CapDrop).toEqual(['ALL']);
      expect([...(HostConfig.CapAdd ?? [])].sort()).toEqual(
        [
          'CHOWN',
          'DAC_OVERRIDE',
          'FOWNER',
          'FSETID',
          'KILL',
          'NET_BIND_SERVICE',
          'SETGID',
          'SETPCAP',
          'SETUID',
        ].sort(),
      );
      expect(HostConfig.SecurityOpt).toContain('no-new-privileges:true');
      expect(HostConfig.Privileged).toBe(false);
    }
  });

  it('inside the container: no NET_RAW (ping fails with a permission error), no MKNOD', async () => {
    const ping = await exec('web', ['ping', '-c', '1', '-W', '1', '127.0.0.1']);
    expect(ping.code).not.toBe(0);
    expect(ping.output).toMatch(/permission denied/i);
    // CAP_NET_RAW is bit 13, CAP_MKNOD bit 27, CAP_SYS_ADMIN bit 21 of the effective set.
    const status = await exec('web', ['grep', 'CapEff', '/proc/self/status']);
    const effective = BigInt(`0x${/CapEff:\s*([0-9a-f]+)/.exec(status.output)![1]}`);
    for (const bit of [13n, 21n, 27n]) expect(effective & (1n << bit)).toBe(0n);
    const mknod = await exec('web', ['mknod', '/tmp/null2', 'c', '1', '3']);
    expect(mknod.code).not.toBe(0);
  });

  it('images that start as root can still chown their data and drop to another user', async () => {
    const chown = await exec('web', [
      'sh',
      '-c',
      'touch /tmp/data && chown 65534:65534 /tmp/data && stat -c %u /tmp/data',
    ]);
    expect(chown).toMatchObject({ code: 0, output: expect.stringContaining('65534') });
    const drop = await exec('web', ['su', '-s', '/bin/sh', 'nobody', '-c', 'id -u']);
    expect(drop).toMatchObject({ code: 0, output: expect.stringContaining('65534') });
  });

  it('a fork bomb is held at its pids limit', async () => {
    const info = await inspectOf('bomb');
    const container = docker.getContainer(info.Id);
    // Wait until the loop has pushed against the limit, then check it never went past it.
    const current = await waitFor(
      'the fork loop to reach its pids limit',
      async () => {
        const stats = (await container.stats({ stream: false })) as { pids_stats?: { current?: number } };
        const pids = stats.pids_stats?.current ?? 0;
        return pids >= 38 ? pids : undefined;
      },
      30_000,
    );
    expect(current).toBeLessThanOrEqual(40);
    expect((await container.inspect()).State.Running).toBe(true);
  });
});
