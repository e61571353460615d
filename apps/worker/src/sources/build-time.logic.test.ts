import { NO_GROUPS, type WorkerService } from '@hostctl/db';
import { startGitServer, type GitServer } from '@hostctl/testing';
import { parseAllowedHosts, protectedEndpoints } from '@hostctl/source-policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitClient } from '../adapters/git-client.js';
import { ImageBuildError, type ImageBuilder } from '../adapters/image-builder.js';
import { planFromRepository } from './repository-source.js';

// Issue 31, build_minutes_per_day (docs/quotas.md#builds): the build step's duration is written on
// the deployment when the step ends, whether the build succeeded or failed. A real git server
// (git daemon on 127.0.0.1) and clone; the builder is a stand-in that takes a known time, so no
// Docker is needed.
let server: GitServer;
let url = '';

beforeAll(async () => {
  server = await startGitServer();
  const repo = await server.repo('build-time');
  await repo.push({ Dockerfile: 'FROM local/busybox:1\nEXPOSE 8080\n' });
  url = repo.url;
});
afterAll(async () => server?.close());

const BUILD_MS = 300;

/** Takes BUILD_MS, then answers with an image or fails as a Dockerfile step would. */
const slowBuilder = (outcome: 'built' | 'failed'): ImageBuilder => ({
  build: async () => {
    await new Promise((resolve) => setTimeout(resolve, BUILD_MS));
    if (outcome === 'failed') throw new ImageBuildError('RUN exited with 1');
    return { id: 'sha256:0123', exposedPorts: [8080] };
  },
});

const service = (): WorkerService => ({
  id: '00000000-0000-4000-8000-0000000000b1',
  name: 'build-time',
  status: 'deploying',
  deployMethod: 'git',
  compose: '',
  variables: {},
  secretNames: {},
  variablesVersion: 1,
  groups: NO_GROUPS,
  url: 'http://build-time.apps.localhost',
  gitUrl: url,
  gitBranch: 'main',
  aiUrl: null,
  customDomains: [],
  deletedAt: null,
  purgedAt: null,
});

async function build(outcome: 'built' | 'failed') {
  const recorded: { id: string; ms: number }[] = [];
  const attempt = planFromRepository(
    {
      git: createGitClient(),
      builder: slowBuilder(outcome),
      allowedHosts: parseAllowedHosts('127.0.0.1:1024-65535'),
      protectedEndpoints: protectedEndpoints([]),
      cloneTimeoutMs: 30_000,
      maxRepoBytes: 1024 * 1024,
      images: { node: 'n', python: 'p', go: 'g', goRuntime: 'gr', static: 's' },
    },
    {
      deploymentId: 'd-build-time',
      service: service(),
      store: {
        recordCommit: async () => {},
        recordBuildTime: async (id, ms) => void recorded.push({ id, ms }),
      },
      log: { info: async () => {}, error: async () => {} },
      signal: AbortSignal.timeout(60_000),
      checkpoint: async () => {},
      images: {
        policy: {
          platformImages: ['local/*'],
          registryAllowedHosts: [],
          protectedEndpoints: protectedEndpoints([]),
        },
      },
    },
  );
  return { attempt, recorded };
}

describe('the build step records its duration', () => {
  it('once, when the build succeeded', async () => {
    const { attempt, recorded } = await build('built');
    await expect(attempt).resolves.toMatchObject({ plan: { containers: [{ name: 'web' }] } });
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.id).toBe('d-build-time');
    expect(recorded[0]?.ms).toBeGreaterThanOrEqual(BUILD_MS - 5);
  });

  it('once, when the build failed', async () => {
    const { attempt, recorded } = await build('failed');
    await expect(attempt).rejects.toThrow(/RUN exited with 1/);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.ms).toBeGreaterThanOrEqual(BUILD_MS - 5);
  });
});
