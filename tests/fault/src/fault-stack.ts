import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { appBundles, freePort } from '@hostctl/testing';
import { inject } from 'vitest';
import { CADDY_ADMIN_URL, LOG_DIR, ROOT } from './fault-env.js';

/**
 * Real api and worker processes, run from the bundles production images run, by node itself (no
 * wrapper process: a SIGKILL reaches the app), sharing one installation. Each process logs to
 * .data/logs/fault/<name>.log for the post-mortem of a failed run. Workers can be SIGKILLed or
 * SIGTERMed and started again on the same health port.
 */

export interface ManagedProcess {
  name: string;
  /** Base URL of its HTTP endpoints (api port, or worker health port). */
  url: string;
  child: ChildProcess;
  /** How many times it was started. */
  generation: number;
}

export interface FaultStack {
  env: Record<string, string>;
  apis: ManagedProcess[];
  workers: ManagedProcess[];
  /** Starts (again) the worker in slot `index` and waits until it answers /readyz. */
  startWorker(index: number): Promise<void>;
  /** Sends the signal and resolves with the milliseconds until the process exited. */
  signal(process: ManagedProcess, signal: 'SIGKILL' | 'SIGTERM'): Promise<number>;
  cli(...args: string[]): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startFaultStack(options: {
  databaseUrl: string;
  cliDatabaseUrl: string;
  redisUrl: string;
  apis: number;
  workers: number;
  extraEnv?: Record<string, string>;
}): Promise<FaultStack> {
  mkdirSync(LOG_DIR, { recursive: true });
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: options.redisUrl,
    QUEUE_PREFIX: `fault-${randomUUID().slice(0, 8)}`,
    SESSION_SECRET: randomBytes(32).toString('hex'),
    // The key the test code's own client uses (.data/env.test): both read the same data keys.
    SECRETS_KEK: process.env.SECRETS_KEK ?? '',
    SECRETS_KEK_ID: process.env.SECRETS_KEK_ID ?? 'k1',
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '100000',
    CADDY_ADMIN_URL,
    ...options.extraEnv,
  };
  const opened = new Set<string>();
  const launch = (name: string, entry: string, own: Record<string, string>) => {
    // A fresh log per run; a restarted process appends to its predecessor's.
    const log = createWriteStream(path.join(LOG_DIR, `${name}.log`), { flags: opened.has(name) ? 'a' : 'w' });
    opened.add(name);
    const bundle = appBundles(inject('bundles')).entryOf(entry);
    const child = spawn(process.execPath, ['--enable-source-maps', bundle], {
      cwd: ROOT,
      env: { ...process.env, ...env, ...own },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    return child;
  };

  const apis: ManagedProcess[] = [];
  for (let i = 0; i < options.apis; i++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const own = { API_PORT: String(port), PUBLIC_URL: url };
    apis.push({
      name: `api-${i}`,
      url,
      child: launch(`api-${i}`, 'apps/api/src/main.ts', own),
      generation: 1,
    });
  }
  const workers: ManagedProcess[] = [];
  for (let i = 0; i < options.workers; i++) {
    const port = await freePort();
    workers.push({
      name: `worker-${i}`,
      url: `http://127.0.0.1:${port}`,
      child: undefined as never,
      generation: 0,
    });
  }
  const startWorker = async (index: number) => {
    const worker = workers[index]!;
    const port = new URL(worker.url).port;
    worker.child = launch(worker.name, 'apps/worker/src/main.ts', { WORKER_HEALTH_PORT: port });
    worker.generation += 1;
    await waitReady(`${worker.url}/readyz`, worker);
  };
  try {
    await Promise.all(workers.map((_, index) => startWorker(index)));
    await Promise.all(apis.map((api) => waitReady(`${api.url}/readyz`, api)));
  } catch (error) {
    // The suite gets no stack to stop: the processes started so far must not outlive it (seen:
    // a failed start left two apis and three workers running for the rest of the session).
    for (const item of [...apis, ...workers]) item.child?.kill('SIGKILL');
    throw error;
  }

  return {
    env,
    apis,
    workers,
    startWorker,
    async signal(target, signal) {
      const started = Date.now();
      if (target.child.exitCode !== null || target.child.signalCode !== null) return 0;
      const exited = new Promise((resolve) => target.child.once('exit', resolve));
      target.child.kill(signal);
      await exited;
      return Date.now() - started;
    },
    async cli(...args) {
      const child = spawn(
        process.execPath,
        [appBundles(inject('bundles')).entryOf('apps/cli/src/main.ts'), ...args, '--json'],
        {
          cwd: ROOT,
          env: { ...process.env, ...env, DATABASE_URL: options.cliDatabaseUrl },
        },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      if (code !== 0) throw new Error(`hostctl ${args.join(' ')} exited ${code}: ${err}`);
      return JSON.parse(out) as Record<string, unknown>;
    },
    async stop() {
      await Promise.all(
        [...apis, ...workers].map(async (item) => {
          if (!item.child || item.child.exitCode !== null || item.child.signalCode !== null) return;
          const exited = new Promise((resolve) => item.child.once('exit', resolve));
          item.child.kill('SIGTERM');
          const timer = setTimeout(() => item.child.kill('SIGKILL'), 30_000);
          await exited;
          clearTimeout(timer);
        }),
      );
    },
  };
}

/** Within the suite's hook timeout (120 s), so that the start's own error is the one reported. */
async function waitReady(url: string, { name, child }: ManagedProcess, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `${name} exited (${child.exitCode ?? child.signalCode}) before it was ready (see ${LOG_DIR}/${name}.log)`,
      );
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(2000) })).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(
    `${name} did not become ready at ${url} within ${timeoutMs} ms (see ${LOG_DIR}/${name}.log)`,
  );
}
