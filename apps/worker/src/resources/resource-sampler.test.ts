import { randomUUID } from 'node:crypto';
import { COMPONENT_LABEL, OWNER_LABEL, SERVICE_LABEL, INSTANCE_LABEL } from '@hostctl/domain';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createComposeService,
  deleteServiceRows,
  waitFor,
  type CreatedService,
} from '../testing/fixtures.js';
import { samplerOnRealEngine } from '../testing/sampler-fixture.js';
import { TEST_IMAGE } from '../testing/test-env.js';

// Real Docker stats and disk usage of a container that burns CPU and writes to its volume.
const { prefix, db, runtime, sampler, close } = samplerOnRealEngine('resources', 30_000);
const created: CreatedService[] = [];
const containers: string[] = [];
const volumes: string[] = [];

afterAll(async () => {
  for (const id of containers) await runtime.removeContainer(id);
  for (const name of volumes) await runtime.removeVolume(name);
  await deleteServiceRows(db, created);
  await close();
});

describe('resource sampler', () => {
  it('stores CPU, memory, limit and storage on running services, and zero usage on stopped ones', async () => {
    const service = await createComposeService(db, {
      compose: `services:\n  app:\n    image: ${TEST_IMAGE}\n`,
    });
    const stopped = await createComposeService(db, {
      compose: `services:\n  app:\n    image: ${TEST_IMAGE}\n`,
    });
    created.push(service, stopped);
    await db.service.update({
      where: { id: service.serviceId },
      data: { status: 'running', memoryLimitMb: 0 },
    });
    await db.service.update({
      where: { id: stopped.serviceId },
      data: { status: 'stopped', cpuUsage: 50, memoryUsageMb: 20 },
    });
    const labels = { [OWNER_LABEL]: 'true', [INSTANCE_LABEL]: prefix, [SERVICE_LABEL]: service.serviceId };
    const volume = `${prefix}-data`;
    await runtime.ensureVolume(volume, labels);
    volumes.push(volume);
    const id = await runtime.createContainer({
      name: `${prefix}-${randomUUID().slice(0, 8)}`,
      image: TEST_IMAGE,
      command: ['sh', '-c', 'dd if=/dev/zero of=/data/blob bs=1M count=6; while true; do :; done'],
      env: [],
      labels: { ...labels, [COMPONENT_LABEL]: 'app' },
      exposedPorts: [],
      init: true,
      restart: { name: 'no' },
      memoryBytes: 64 * 1024 * 1024,
      mounts: [{ volume, target: '/data', readOnly: false }],
      network: 'bridge',
      aliases: [],
    });
    containers.push(id);
    await runtime.startContainer(id);

    await waitFor('a busy sample', async () => {
      const result = await sampler.runOnce();
      const mine = result?.find((sample) => sample.id === service.serviceId);
      return mine && (mine.cpuUsage ?? 0) > 20 && (mine.storageMb ?? 0) >= 6 ? result : null;
    });

    const stored = await db.service.findUniqueOrThrow({ where: { id: service.serviceId } });
    expect(stored.cpuUsage).toBeGreaterThan(20);
    expect(stored.memoryUsageMb).toBeGreaterThan(0);
    expect(stored.memoryLimitMb).toBe(64);
    expect(stored.storageMb).toBeGreaterThanOrEqual(6);
    expect(await db.service.findUniqueOrThrow({ where: { id: stopped.serviceId } })).toMatchObject({
      cpuUsage: 0,
      memoryUsageMb: 0,
    });
  });
});
