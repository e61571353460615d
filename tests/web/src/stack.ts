import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { QUEUE_PREFIX, REDIS_URL, WEB_DATABASE_URL } from './env.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

/** What the test files get from the global setup (through vitest's provide/inject). */
export interface WebStack {
  appUrl: string;
  issuer: string;
  /** `hsk_…` of the seeded admin, for arranging and cleaning up through the API. */
  adminKey: string;
  /** Seeded customers by name (`acme`, `globex`). */
  customers: Record<string, string>;
  /** git:// base URL of the test git server (allowlisted by GIT_ALLOWED_HOSTS). */
  gitBase: string;
  artifactsDir: string;
}

export interface Running {
  child: ChildProcess;
  logs: string[];
}

/**
 * Starts an app through its entry point, as the dev stack does. Only PATH and HOME come from the
 * caller's environment: a developer's shell (CADDY_ADMIN_URL, DNS_PROVIDER …) must not point the
 * test stack at the shared Caddy or PowerDNS.
 */
export function startApp(entry: string, env: Record<string, string>): Running {
  const logs: string[] = [];
  const child = spawn(TSX, [path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => {
    logs.push(chunk.toString());
    if (logs.length > 300) logs.shift();
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  return { child, logs };
}

/** The dev identity provider with the real dev accounts (apps/dev-idp/accounts.json). */
export async function startDevIdp(
  appUrl: string,
  clientSecret: string,
  port: number,
): Promise<Running & { issuer: string }> {
  const running = startApp('apps/dev-idp/src/main.ts', {
    DEV_IDP_PORT: String(port),
    OIDC_CLIENT_SECRET: clientSecret,
    PUBLIC_URL: appUrl,
  });
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev-idp not ready:\n${running.logs.join('')}`)), 90_000);
    running.child.once('exit', (code) =>
      reject(new Error(`dev-idp exited ${code}:\n${running.logs.join('')}`)),
    );
    createInterface({ input: running.child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const message = JSON.parse(line) as { event?: string; issuer?: string };
      if (message.event === 'ready' && message.issuer) {
        clearTimeout(timer);
        resolve(message.issuer);
      }
    });
  });
  return { ...running, issuer };
}

/** Environment shared by the API and the worker of the web test stack. */
export function stackEnv(input: {
  appUrl: string;
  issuer: string;
  clientSecret: string;
  backupPath: string;
}) {
  const unlimited = '100000';
  return {
    NODE_ENV: 'test',
    DATABASE_URL: WEB_DATABASE_URL,
    REDIS_URL,
    QUEUE_PREFIX,
    SESSION_SECRET: randomBytes(32).toString('hex'),
    // The key the test code's own client uses (.data/env.test): both read the same data keys.
    SECRETS_KEK: process.env.SECRETS_KEK ?? '',
    SECRETS_KEK_ID: process.env.SECRETS_KEK_ID ?? 'k1',
    API_HOST: '127.0.0.1',
    API_PORT: new URL(input.appUrl).port,
    PUBLIC_URL: input.appUrl,
    OIDC_ISSUER: input.issuer,
    OIDC_CLIENT_SECRET: input.clientSecret,
    LOG_LEVEL: 'warn',
    APPS_DOMAIN: 'apps.localhost',
    // Routing and DNS off: the tests must not touch the dev stack's Caddy and zone.
    CADDY_ADMIN_URL: '',
    DNS_PROVIDER: 'none',
    PLATFORM_IMAGES: 'local/*',
    AI_BASE_IMAGE_STATIC: 'local/busybox:1',
    GIT_ALLOWED_HOSTS: '127.0.0.1:32768-60999',
    REGISTRY_ALLOWED_HOSTS: '127.0.0.1:5000',
    RATE_LIMIT_PER_MINUTE: unlimited,
    RATE_LIMIT_LOGIN_PER_MINUTE: unlimited,
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: unlimited,
    RECONCILE_INTERVAL_MS: '5000',
    HEALTH_INTERVAL_MS: '3000',
    RESOURCE_INTERVAL_MS: '5000',
    WORKER_HEALTH_PORT: '0',
    // Short cutover windows (default 10 s each) keep deploys quick.
    RELEASE_STABILIZATION_MS: '1000',
    RELEASE_DRAIN_MS: '500',
    // Real backups for the Backups tab (restic in the engine image): a repository directory of the
    // run's own and a random operator key, so nothing here opens anyone else's repository.
    BACKUP_LOCAL_PATH: input.backupPath,
    BACKUP_KEY: randomBytes(32).toString('hex'),
    ...(process.env.BACKUP_IMAGE ? { BACKUP_IMAGE: process.env.BACKUP_IMAGE } : {}),
  };
}

// A ceiling, not a measurement: a cold tsx start of the API takes ~50 s on a loaded 2-core machine.
export async function waitReady(url: string, running: Running, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (running.child.exitCode !== null) break;
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not become ready:\n${running.logs.join('').slice(-3000)}`);
}

/** Runs a script of the repository to completion and returns its stdout. */
export async function runScript(args: string[], env: Record<string, string>): Promise<string> {
  const child = spawn(TSX, args, { cwd: ROOT, env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}: ${err}`);
  return out;
}

export async function stopAll(running: Running[]): Promise<void> {
  await Promise.all(
    running.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
        }),
    ),
  );
}
