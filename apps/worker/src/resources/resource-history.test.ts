import { randomUUID } from 'node:crypto';
import { COMPONENT_LABEL, INSTANCE_LABEL, OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { afterAll, describe, expect, it } from 'vitest';
import type { ContainerSpec } from '../adapters/runtime.js';
import {
  createComposeService,
  deleteServiceRows,
  waitFor,
  type CreatedService,
} from '../testing/fixtures.js';
import { samplerOnRealEngine } from '../testing/sampler-fixture.js';
import { TEST_IMAGE } from '../testing/test-env.js';

// The resource history on the real engine (docs/health-and-resources.md#history): the sampler's
// sweeps add network traffic, restarts and OOM kills between sweeps to the service's buckets.
// One-second slots: every sweep (about a second of stats reads) is a sample of its own.
const { prefix, db, runtime, history, sampler, close } = samplerOnRealEngine('history', 1000);
const created: CreatedService[] = [];
const containers: string[] = [];

afterAll(async () => {
  for (const id of containers) await runtime.removeContainer(id);
  await deleteServiceRows(db, created);
  await close();
});

async function start(serviceId: string, component: string, spec: Partial<ContainerSpec>): Promise<string> {
  const id = await runtime.createContainer({
    name: `${prefix}-${component}-${randomUUID().slice(0, 8)}`,
    image: TEST_IMAGE,
    env: [],
    labels: {
      [OWNER_LABEL]: 'true',
      [INSTANCE_LABEL]: prefix,
      [SERVICE_LABEL]: serviceId,
      [COMPONENT_LABEL]: component,
    },
    exposedPorts: [],
    init: true,
    restart: { name: 'no' },
    mounts: [],
    network: 'bridge',
    aliases: [],
    ...spec,
  });
  containers.push(id);
  await runtime.startContainer(id);
  return id;
}

describe('resource history', () => {
  it('counts network bytes, restarts and OOM kills between sweeps into the service buckets', async () => {
    const service = await createComposeService(db, {
      compose: `services:\n  app:\n    image: ${TEST_IMAGE}\n`,
    });
    created.push(service);
    await db.service.update({ where: { id: service.serviceId }, data: { status: 'running' } });
    const server = await start(service.serviceId, 'web', {
      command: [
        'sh',
        '-c',
        'mkdir -p /www && head -c 20000 /dev/zero > /www/index.html && httpd -f -p 8080 -h /www',
      ],
    });
    const address = (await runtime.inspectContainer(server))?.ip;
    expect(address).toBeTruthy();
    await start(service.serviceId, 'client', {
      command: ['sh', '-c', `while true; do wget -q -O /dev/null http://${address}:8080/; sleep 0.2; done`],
    });
    // Killed by the kernel at its 16 MiB limit, again and again under its restart policy.
    await start(service.serviceId, 'hog', {
      command: ['sh', '-c', 'sleep 1; tail /dev/zero'],
      memoryBytes: 16 * 1024 * 1024,
      restart: { name: 'on-failure' },
    });

    const from = new Date(Date.now() - 10 * 60_000);
    const totals = await waitFor(
      'traffic, restarts and an OOM kill in the history',
      async () => {
        await sampler.runOnce();
        const points = await history.series(
          service.serviceId,
          from,
          new Date(Date.now() + 10 * 60_000),
          '5m',
        );
        const sum = (pick: (point: (typeof points)[number]) => number) =>
          points.reduce((total, point) => total + pick(point), 0);
        const seen = {
          samples: sum((point) => point.samples),
          rx: sum((point) => point.networkRxBytes),
          tx: sum((point) => point.networkTxBytes),
          restarts: sum((point) => point.restarts),
          oomKills: sum((point) => point.oomKills),
        };
        return seen.rx > 20_000 && seen.tx > 0 && seen.restarts >= 2 && seen.oomKills >= 1 ? seen : null;
      },
      60_000,
    );
    expect(totals.samples).toBeGreaterThanOrEqual(2);
    // An OOM kill is counted only on a restart it caused: never more of them than restarts.
    expect(totals.oomKills).toBeLessThanOrEqual(totals.restarts);
  });
});
