import { EventEmitter } from 'node:events';
import { parseAllowedHosts, protectedEndpoints, type Lookup } from '@hostctl/source-policy';
import { describe, expect, it } from 'vitest';
import { isNamedBy } from '../adapters/docker-client.js';
import { installProcessGuard } from '@hostctl/config';
import { assertImageAllowed, type ImageGuard } from './image-guard.js';
import { PermanentStepError } from './step-errors.js';

// The worker's own checks, without Docker or real DNS: names resolve through an injected table.
const lookup: Lookup = async (host) => {
  const table: Record<string, string[]> = {
    'rebind.example.test': ['93.184.215.14', '127.0.0.1'],
    'meta.example.test': ['169.254.169.254'],
    'public.example.test': ['93.184.215.34'],
  };
  const found = table[host];
  if (!found) throw new Error(`ENOTFOUND ${host}`);
  return found.map((address) => ({ address, family: 4 }));
};
const guard: ImageGuard = {
  policy: {
    platformImages: ['local/*'],
    registryAllowedHosts: parseAllowedHosts('127.0.0.1:5000'),
    protectedEndpoints: protectedEndpoints([]),
  },
  lookup,
};

describe('assertImageAllowed', () => {
  it.each([
    ['rebind.example.test/app:1', /loopback/],
    ['meta.example.test:5000/app:1', /link-local/],
    ['unknown.example.test/app:1', /cannot be resolved/],
    ['hostctl/0123456789ab:1', /reserved/],
    ['x/../../containers/foo', /path component/],
  ])('refuses %s permanently', async (image, reason) => {
    const attempt = assertImageAllowed(guard, image);
    await expect(attempt).rejects.toBeInstanceOf(PermanentStepError);
    await expect(attempt).rejects.toThrow(reason);
  });

  it('allows public registries, allowlisted ones and the service’s own builds', async () => {
    await assertImageAllowed(guard, 'public.example.test/app:1');
    await assertImageAllowed(guard, '127.0.0.1:5000/app:1');
    await assertImageAllowed(guard, 'local/busybox:1');
    await assertImageAllowed(guard, 'hostctl/0123456789ab:c0ffee', ['hostctl/0123456789ab']);
  });
});

describe('isNamedBy', () => {
  const image = {
    RepoTags: ['local/busybox:1', 'nginx:latest'],
    RepoDigests: [`r.test/app@sha256:${'a'.repeat(64)}`],
  };
  it('accepts only a RepoTags/RepoDigests entry for the reference', () => {
    expect(isNamedBy('local/busybox:1', image)).toBe(true);
    expect(isNamedBy('nginx', image)).toBe(true);
    expect(isNamedBy('docker.io/library/nginx:latest', image)).toBe(true);
    expect(isNamedBy(`r.test/app@sha256:${'a'.repeat(64)}`, image)).toBe(true);
    expect(isNamedBy('local/busybox:2', image)).toBe(false);
    expect(isNamedBy('cafe:latest', image)).toBe(false);
    expect(isNamedBy('61702b6e083b', image)).toBe(false);
  });
});

describe('installProcessGuard', () => {
  it('logs an uncaught error or rejection instead of ending the process', () => {
    const proc = new EventEmitter();
    const logged: string[] = [];
    installProcessGuard({ error: (_details, message) => logged.push(message) }, proc);
    proc.emit('uncaughtException', new Error('getaddrinfo ENOTFOUND containers'));
    proc.emit('unhandledRejection', new Error('late'));
    expect(logged).toEqual([
      'uncaught exception (process kept running)',
      'unhandled promise rejection (process kept running)',
    ]);
  });
});
