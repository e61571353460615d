import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { NO_GROUPS, type WorkerService } from '@hostctl/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGitClient } from '../adapters/git-client.js';
import type { ImageBuilder } from '../adapters/image-builder.js';
import { PermanentStepError } from '../pipeline/step-errors.js';
import { parseAllowedHosts, protectedEndpoints } from '@hostctl/source-policy';
import { planFromRepository, type RepositorySourceDeps } from './repository-source.js';

// The source step's guards, without Docker: every refusal happens before git or the builder run,
// and a git server that never answers is cut off by GIT_CLONE_TIMEOUT_MS. The only sockets opened
// are to a silent server on 127.0.0.1; other hosts get fake DNS answers and are never contacted.
const lines: string[] = [];
const noBuilder: ImageBuilder = {
  build: () => Promise.reject(new Error('the builder must not be reached')),
};
let silent: net.Server;
let silentPort = 0;
const sockets = new Set<net.Socket>();

const deps = (overrides: Partial<RepositorySourceDeps> = {}): RepositorySourceDeps => ({
  git: createGitClient(),
  builder: noBuilder,
  allowedHosts: parseAllowedHosts('127.0.0.1:32768-60999'),
  protectedEndpoints: protectedEndpoints([]),
  cloneTimeoutMs: 1000,
  maxRepoBytes: 1024 * 1024,
  images: { node: 'n', python: 'p', go: 'g', goRuntime: 'gr', static: 's' },
  lookup: async (host) => {
    const table: Record<string, string[]> = {
      'internal.example.test': ['10.20.30.40'],
      'metadata.example.test': ['93.184.215.14', '169.254.169.254'],
      'public.example.test': ['93.184.215.34'],
    };
    const addresses = table[host];
    if (!addresses) throw new Error(`ENOTFOUND ${host}`);
    return addresses.map((address) => ({ address, family: 4 }));
  },
  ...overrides,
});

const service = (input: Partial<WorkerService>): WorkerService => ({
  id: '00000000-0000-4000-8000-000000000001',
  name: 'source-test',
  status: 'deploying',
  deployMethod: 'git',
  compose: '',
  variables: {},
  secretNames: {},
  variablesVersion: 1,
  groups: NO_GROUPS,
  url: 'http://source-test.apps.localhost',
  gitUrl: null,
  gitBranch: null,
  aiUrl: null,
  customDomains: [],
  deletedAt: null,
  purgedAt: null,
  ...input,
});

const run = (input: Partial<WorkerService>) => ({
  deploymentId: 'd-1',
  service: service(input),
  store: {
    recordCommit: () => Promise.reject(new Error('no commit may be recorded')),
    recordBuildTime: () => Promise.reject(new Error('nothing may be built')),
  },
  log: {
    info: async (line: string) => void lines.push(line),
    error: async (line: string) => void lines.push(line),
  },
  signal: AbortSignal.timeout(30_000),
  checkpoint: async () => {},
  images: {
    policy: { platformImages: [], registryAllowedHosts: [], protectedEndpoints: protectedEndpoints([]) },
  },
});

beforeAll(async () => {
  // Accepts git:// connections and never says anything.
  silent = net.createServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentPort = (silent.address() as net.AddressInfo).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});

describe('planFromRepository refuses before fetching', () => {
  it.each([
    [
      { gitUrl: 'https://internal.example.test/org/repo.git' },
      /resolves to a private address \(10\.20\.30\.40\)/,
    ],
    [{ gitUrl: 'https://metadata.example.test/org/repo.git' }, /link-local address \(169\.254\.169\.254\)/],
    [{ gitUrl: 'https://unknown.example.test/org/repo.git' }, /cannot be resolved: ENOTFOUND/],
    [{ gitUrl: 'https://localhost/org/repo.git' }, /points at localhost/],
    [{ gitUrl: 'ext::sh -c id' }, /URL refused/],
    [{ gitUrl: 'file:///etc' }, /scheme file/],
    [{ gitUrl: 'git://github.example.test/org/repo.git' }, /only allowed for hosts in GIT_ALLOWED_HOSTS/],
    [{ gitUrl: `git://127.0.0.1:40000/repo.git`, gitBranch: '--upload-pack=touch /tmp/x' }, /branch refused/],
    [{ deployMethod: 'ai' as const, aiUrl: 'https://internal.example.test/site.git' }, /private address/],
  ])('%j', async (input, reason) => {
    const attempt = planFromRepository(deps(), run(input));
    await expect(attempt).rejects.toBeInstanceOf(PermanentStepError);
    await expect(attempt).rejects.toThrow(reason);
  });
});

describe('planFromRepository time bound', () => {
  it('gives up on a git server that never answers, for good', async () => {
    const started = Date.now();
    const attempt = planFromRepository(deps(), run({ gitUrl: `git://127.0.0.1:${silentPort}/repo.git` }));
    await expect(attempt).rejects.toThrow(/did not finish within 1s \(GIT_CLONE_TIMEOUT_MS\)/);
    await expect(attempt).rejects.toBeInstanceOf(PermanentStepError);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('planFromRepository pins the address it checked (DNS rebinding)', () => {
  it('ssh is told the approved address and checks the host key under the name', async () => {
    // A stand-in for ssh on PATH records how the pinned wrapper calls it and opens no connection.
    const bin = await mkdtemp(path.join(os.tmpdir(), 'hostctl-fake-ssh-'));
    const argsFile = path.join(bin, 'args');
    await writeFile(
      path.join(bin, 'ssh'),
      `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\necho 'fatal: Could not read from remote repository.' >&2\nexit 128\n`,
      { mode: 0o755 },
    );
    const originalPath = process.env.PATH;
    process.env.PATH = `${bin}:${originalPath ?? ''}`;
    try {
      await expect(
        planFromRepository(deps(), run({ gitUrl: 'ssh://git@public.example.test:2222/org/repo.git' })),
      ).rejects.toThrow(/cannot read ssh:\/\/git@public\.example\.test/);
    } finally {
      process.env.PATH = originalPath;
    }
    const args = (await readFile(argsFile, 'utf8')).trim().split('\n');
    expect(args).toEqual(
      expect.arrayContaining([
        '-o',
        'HostName=93.184.215.34',
        'HostKeyAlias=public.example.test',
        '-p',
        '2222',
        'git@public.example.test',
      ]),
    );
    await rm(bin, { recursive: true, force: true });
  });
});
