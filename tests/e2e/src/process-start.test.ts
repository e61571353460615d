import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEntry } from './entry-process.js';

/**
 * A process that cannot start (its port taken, an engine that refused a network) exits non-zero so
 * its supervisor starts it again, instead of living on unready under the process guard, which keeps
 * a started process alive through stray errors (seen: a worker whose start failed stayed up and
 * never consumed, and the fault suite waited on it).
 */
let taken: Server;
let port: number;

beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  port = (taken.address() as { port: number }).port;
});
afterAll(async () => new Promise<void>((resolve) => taken.close(() => resolve())));

describe('a process whose start fails', { timeout: 120_000 }, () => {
  it('the api exits 1 and says why', async () => {
    const { code, output } = await runEntry('apps/api/src/main.ts', {
      API_HOST: '127.0.0.1',
      API_PORT: String(port),
    });
    expect(code).toBe(1);
    expect(output).toMatch(/the API did not start.*EADDRINUSE/s);
  });

  it('the worker exits 1 and says why', async () => {
    const { code, output } = await runEntry('apps/worker/src/main.ts', { WORKER_HEALTH_PORT: String(port) });
    expect(code).toBe(1);
    expect(output).toMatch(/the worker did not start.*EADDRINUSE/s);
  });
});

describe('a process whose settings cannot work', { timeout: 120_000 }, () => {
  it('the api exits 2 and names each problem, before it connects to anything', async () => {
    const { code, output } = await runEntry('apps/api/src/main.ts', {
      NODE_ENV: 'production',
      OIDC_ISSUER: 'http://127.0.0.1:9',
      PUBLIC_URL: 'http://127.0.0.1:3000',
    });
    expect(code).toBe(2);
    expect(output).toContain('OIDC_ISSUER: must be an https:// URL in production');
    expect(output).toContain('PUBLIC_URL: must be an https:// URL in production');
    // The problems, not a stack trace with the (bundled, minified) source line of the throw.
    expect(output).not.toMatch(/\bat .*main\.(ts|mjs)/);
  });
});
