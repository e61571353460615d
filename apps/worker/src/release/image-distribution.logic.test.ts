import { dockerNamePrefix } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import type { ImageRegistry } from '../adapters/image-registry.js';
import { removePushedImages, serviceRepositoryPrefix } from './image-distribution.js';

/** A registry in memory: repository → tag → digest; deleting a digest drops all its tags, as the API does. */
function memoryRegistry(contents: Record<string, Record<string, string>>) {
  const deleted: string[] = [];
  const registry: ImageRegistry = {
    repositories: async (prefix) => Object.keys(contents).filter((name) => name.startsWith(prefix)),
    tags: async (repository) => Object.keys(contents[repository] ?? {}),
    digest: async (repository, tag) => contents[repository]?.[tag],
    async deleteManifest(repository, digest) {
      deleted.push(`${repository}@${digest}`);
      for (const [tag, pointed] of Object.entries(contents[repository] ?? {}))
        if (pointed === digest) delete contents[repository]![tag];
    },
  };
  return { registry, contents, deleted };
}

describe('removing what a service pushed to the registry', () => {
  const service = { id: '0123456789ab-cdef-4000-8000-000000000001', deploymentIds: ['d1', 'd2', 'd3'] };
  const web = `${serviceRepositoryPrefix(service.id)}web`;

  it('names repositories after the service prefix', () => {
    expect(web).toBe(`hostctl/${dockerNamePrefix(service.id)}-web`);
  });

  it("removes the service's releases except the kept ones, and only the service's", async () => {
    // Another service whose id shares the 12-character prefix: same repository names.
    const { registry, contents } = memoryRegistry({
      [web]: { d1: 'sha256:1', d2: 'sha256:2', d3: 'sha256:3', 'foreign-deployment': 'sha256:9' },
      'hostctl/else-web': { d1: 'sha256:1' },
    });
    expect(await removePushedImages(registry, service, new Set(['d3']))).toEqual([`${web}:d1`, `${web}:d2`]);
    expect(contents).toEqual({
      [web]: { d3: 'sha256:3', 'foreign-deployment': 'sha256:9' },
      'hostctl/else-web': { d1: 'sha256:1' },
    });
  });

  it('keeps an image a kept release shares with older ones (an unchanged image: one digest)', async () => {
    const { registry, contents, deleted } = memoryRegistry({
      [web]: { d1: 'sha256:same', d2: 'sha256:same', d3: 'sha256:same' },
    });
    expect(await removePushedImages(registry, service, new Set(['d3']))).toEqual([]);
    expect(deleted).toEqual([]);
    expect(contents[web]).toEqual({ d1: 'sha256:same', d2: 'sha256:same', d3: 'sha256:same' });
  });

  it('deletes a digest once, for all the tags pointing at it, when nothing is kept (delete)', async () => {
    const { registry, contents, deleted } = memoryRegistry({
      [web]: { d1: 'sha256:a', d2: 'sha256:a', d3: 'sha256:b' },
    });
    expect(await removePushedImages(registry, service)).toEqual([`${web}:d1`, `${web}:d2`, `${web}:d3`]);
    expect(deleted).toEqual([`${web}@sha256:a`, `${web}@sha256:b`]);
    expect(contents[web]).toEqual({});
  });
});
