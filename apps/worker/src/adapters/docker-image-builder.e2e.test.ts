// Workers started together on a new host (a fresh machine, a scaled-up replica set) each make sure
// the build network exists before they consume; one of them creating it must not stop the others.
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';
import { createDockerImageBuilder } from './docker-image-builder.js';

const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const suffix = randomUUID().slice(0, 6);
const network = { name: `hostctl-test-build-${suffix}`, bridge: `hctb${suffix}` };

afterAll(async () => {
  for (const found of await docker.listNetworks({ filters: JSON.stringify({ name: [network.name] }) }))
    await docker.getNetwork(found.Id).remove();
});

describe('the build network', () => {
  it('is there for every one of three workers that start at the same moment', async () => {
    const builders = [1, 2, 3].map(() =>
      createDockerImageBuilder({ socketPath: '/var/run/docker.sock', network }),
    );
    const started = await Promise.allSettled(builders.map(async (builder) => builder.prepare?.()));
    expect(started.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    const found = await docker.listNetworks({ filters: JSON.stringify({ name: [network.name] }) });
    expect(found.filter((item) => item.Name === network.name)).toHaveLength(1);
  });
});
