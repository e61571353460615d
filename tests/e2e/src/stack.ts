import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { inject } from 'vitest';
import { appBundles, freePort, removeInstanceObjects } from '@hostctl/testing';
import { E2E_DATABASE_URL, REDIS_URL, runtimeEnv } from './env.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface Stack {
  apiUrl: string;
  env: Record<string, string>;
  processes: ChildProcess[];
  /**
   * SIGKILLs every running worker, or only the one with process id `pid` (no drain, locks left to
   * expire); resolves with how many.
   */
  killWorkers(pid?: number): Promise<number>;
  /** Starts one more worker process with the stack's environment. */
  startWorker(): void;
  /**
   * The last output of the stack's processes (about 200 chunks), for a failure's message; all of
   * it when the stack was started with `keepAllOutput`.
   */
  logs(): string;
  /** Runs the operator CLI with the stack's environment and returns its parsed JSON output. */
  cli(...args: string[]): Promise<Record<string, unknown>>;
  /**
   * Stops the processes, then removes the containers, networks and volumes of the installation
   * (its QUEUE_PREFIX); `keepServices` leaves them for a stack started with the same prefix.
   */
  stop(options?: { keepServices?: boolean }): Promise<void>;
}

/** The app's bundle, run by node itself (no wrapper process: killWorkers' SIGKILL reaches the app). */
function start(
  bundles: string,
  entry: string,
  env: Record<string, string>,
  logs: string[],
  keepAll = false,
): ChildProcess {
  const bundle = appBundles(bundles).entryOf(entry);
  const child = spawn(process.execPath, ['--enable-source-maps', bundle], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: 'pipe',
  });
  const keep = (chunk: Buffer) => {
    logs.push(chunk.toString());
    if (!keepAll && logs.length > 200) logs.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return child;
}

// A ceiling, not a measurement: a bundle starts in about a second, far longer under load.
async function waitFor(url: string, logs: string[], timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not become ready:\n${logs.join('').slice(-3000)}`);
}

/** The engines a stack's workers create objects on: the build engine, and the swarm manager's. */
const enginesOf = (env: Record<string, string>): string[] => [
  env.DOCKER_SOCKET ?? process.env.DOCKER_SOCKET ?? '/var/run/docker.sock',
  ...(env.SWARM_DOCKER_HOST ? [env.SWARM_DOCKER_HOST.replace(/^unix:\/\//, '')] : []),
];

/** Exited by itself or by a signal (a killed child has a signalCode and no exitCode). */
const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Starts `apiCount` API processes and `workerCount` workers sharing one queue prefix. */
export async function startStack(
  options: {
    workers?: number;
    extraEnv?: Record<string, string>;
    /** Another build's bundles (the upgrade test's previous release); this run's by default. */
    bundles?: string;
    /** Keep every line the processes write (a test that reads their whole log), not the last ones. */
    keepAllOutput?: boolean;
  } = {},
): Promise<Stack> {
  const bundles = options.bundles ?? inject('bundles');
  const apiPort = await freePort();
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    DATABASE_URL: E2E_DATABASE_URL,
    REDIS_URL,
    QUEUE_PREFIX: `e2e-${randomUUID().slice(0, 8)}`,
    SESSION_SECRET: randomBytes(32).toString('hex'),
    // The key the test code's own client uses (.data/env.test): both read the same data keys.
    SECRETS_KEK: process.env.SECRETS_KEK ?? '',
    SECRETS_KEK_ID: process.env.SECRETS_KEK_ID ?? 'k1',
    API_PORT: String(apiPort),
    PUBLIC_URL: `http://127.0.0.1:${apiPort}`,
    LOG_LEVEL: 'warn',
    RECONCILE_INTERVAL_MS: '5000',
    WORKER_HEALTH_PORT: '0',
    RATE_LIMIT_PER_MINUTE: '100000',
    // Short cutover windows (default 10 s each) keep deploys quick; a test about them sets its own.
    RELEASE_STABILIZATION_MS: '1000',
    RELEASE_DRAIN_MS: '500',
    ...runtimeEnv(),
    ...options.extraEnv,
  };
  const logs: string[] = [];
  const keepAll = options.keepAllOutput ?? false;
  const processes = [start(bundles, 'apps/api/src/main.ts', env, logs, keepAll)];
  const workers: ChildProcess[] = [];
  const startWorker = () => {
    const worker = start(bundles, 'apps/worker/src/main.ts', env, logs, keepAll);
    workers.push(worker);
    processes.push(worker);
  };
  for (let i = 0; i < (options.workers ?? 1); i++) startWorker();
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  await waitFor(`${apiUrl}/readyz`, logs).catch((error: unknown) => {
    // The caller never gets a Stack to stop: do not leave the processes running.
    for (const child of processes) child.kill('SIGKILL');
    throw error;
  });

  return {
    apiUrl,
    env,
    processes,
    startWorker,
    logs: () => logs.join(''),
    async killWorkers(pid) {
      const running = workers.filter(
        (worker) => !hasExited(worker) && (pid === undefined || worker.pid === pid),
      );
      await Promise.all(
        running.map(
          (worker) =>
            new Promise<void>((resolve) => {
              worker.once('exit', () => resolve());
              worker.kill('SIGKILL');
            }),
        ),
      );
      return running.length;
    },
    async cli(...args) {
      const cliBundle = appBundles(bundles).entryOf('apps/cli/src/main.ts');
      const child = spawn(process.execPath, [cliBundle, ...args, '--json'], {
        cwd: ROOT,
        env: { ...process.env, ...env },
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      if (code !== 0) throw new Error(`hostctl ${args.join(' ')} exited ${code}: ${err}`);
      return JSON.parse(out) as Record<string, unknown>;
    },
    async stop({ keepServices = false } = {}) {
      await Promise.all(
        processes.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (hasExited(child)) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGTERM');
              setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
            }),
        ),
      );
      if (keepServices) return;
      for (const socket of enginesOf(env)) await removeInstanceObjects(env.QUEUE_PREFIX!, socket);
    },
  };
}
