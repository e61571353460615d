import path from 'node:path';
import { BENCH, ROOT } from './config.js';
import { run, startNode, waitHttp, type Proc } from './proc.js';

/**
 * How the API and workers run: `tsx` (default: the sources, as in development) or `bundle` (the
 * esbuild bundles of the container images, built by docker/bundle.mjs into .data/bench/bundle).
 */
const RUNTIME = process.env.BENCH_RUNTIME === 'bundle' ? 'bundle' : 'tsx';
const BUNDLE_DIR = path.join(ROOT, '.data', 'bench', 'bundle');

export function runtimeName(): string {
  return RUNTIME;
}

/** Builds the bundles when BENCH_RUNTIME=bundle; a no-op otherwise. */
export async function prepareRuntime(): Promise<void> {
  if (RUNTIME === 'bundle')
    await run(process.execPath, ['docker/bundle.mjs', BUNDLE_DIR, 'api', 'worker'], {});
}

/**
 * Extra node flags for the API and workers, e.g. `BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/p"`
 * to see where a suite's time goes (node refuses --cpu-prof in NODE_OPTIONS).
 */
const EXTRA_NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

function startApp(name: string, app: 'api' | 'worker', env: Record<string, string>): Proc {
  if (RUNTIME === 'tsx')
    return startNode(name, `apps/${app}/src/main.ts`, env, {
      nodeArgs: [...EXTRA_NODE_ARGS, '--import', 'tsx'],
    });
  // As the images run them (docker/*.Dockerfile): no source maps loaded, two malloc arenas.
  return startNode(
    name,
    `apps/${app}/dist/main.mjs`,
    { ...env, MALLOC_ARENA_MAX: '2' },
    {
      cwd: path.join(BUNDLE_DIR, app),
      nodeArgs: EXTRA_NODE_ARGS,
    },
  );
}

/** The dev stack's key-encryption key, which the bench's API and workers both need. */
const secretsKey = () => ({
  SECRETS_KEK: process.env.SECRETS_KEK ?? '',
  SECRETS_KEK_ID: process.env.SECRETS_KEK_ID ?? 'k1',
});

/** The API process as production starts it (apps/api/src/main.ts), configured for the bench. */
export async function startApi(): Promise<Proc> {
  const unlimited = '100000000';
  const proc = startApp('api', 'api', {
    NODE_ENV: 'development',
    DATABASE_URL: BENCH.databaseUrl,
    REDIS_URL: BENCH.redisUrl,
    QUEUE_PREFIX: BENCH.queuePrefix,
    SESSION_SECRET: BENCH.sessionSecret,
    ...secretsKey(),
    API_HOST: '127.0.0.1',
    API_PORT: String(BENCH.ports.api),
    PUBLIC_URL: `http://127.0.0.1:${BENCH.ports.api}`,
    COOKIE_SECURE: 'false',
    // Never contacted: no benchmark signs in through OIDC (sessions are created directly).
    OIDC_ISSUER: 'http://127.0.0.1:9',
    // The bench image (local/busybox:1) is host-less: a platform image, as in the dev stack.
    PLATFORM_IMAGES: 'local/*',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: unlimited,
    RATE_LIMIT_LOGIN_PER_MINUTE: unlimited,
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: unlimited,
    // The schedules suite's measured schedules fire every 30 s (the production floor is 60).
    SCHEDULE_MIN_INTERVAL_SECONDS: '30',
  });
  await waitHttp(proc, `${apiUrl()}/readyz`);
  return proc;
}

export const apiUrl = () => `http://127.0.0.1:${BENCH.ports.api}`;

/**
 * One worker process (apps/worker/src/main.ts). Routing and DNS are off: the bench must not touch
 * the dev stack's Caddy or PowerDNS, so the deploy figures exclude route/record updates. The
 * release suite passes its own Caddy in `extraEnv`.
 */
export async function startWorker(
  index: number,
  options: { concurrency?: number; extraEnv?: Record<string, string> } = {},
): Promise<Proc> {
  const concurrency = options.concurrency ?? process.env.BENCH_WORKER_CONCURRENCY;
  const port = BENCH.ports.workerHealth + index;
  const proc = startApp(`worker-${index + 1}`, 'worker', {
    NODE_ENV: 'development',
    DATABASE_URL: BENCH.databaseUrl,
    REDIS_URL: BENCH.redisUrl,
    QUEUE_PREFIX: BENCH.queuePrefix,
    // The worker opens the data keys the API sealed variables with (docs/secrets.md).
    ...secretsKey(),
    LOG_LEVEL: 'warn',
    WORKER_HEALTH_PORT: String(port),
    DOCKER_SOCKET: BENCH.dockerSocket,
    CADDY_ADMIN_URL: '',
    DNS_PROVIDER: 'none',
    PLATFORM_IMAGES: 'local/*',
    ...(concurrency !== undefined ? { WORKER_CONCURRENCY: String(concurrency) } : {}),
    ...options.extraEnv,
  });
  await waitHttp(proc, `http://127.0.0.1:${port}/readyz`);
  return proc;
}

/** Baseline servers: bare Fastify hello-world and Fastify + one pg SELECT (bench/servers/baseline.ts). */
export async function startBaseline(kind: 'hello' | 'pg'): Promise<{ proc: Proc; url: string }> {
  const port = kind === 'hello' ? BENCH.ports.hello : BENCH.ports.pg;
  const proc = startNode(`baseline-${kind}`, 'bench/servers/baseline.ts', {
    BASELINE_KIND: kind,
    BASELINE_PORT: String(port),
    DATABASE_URL: BENCH.databaseUrl,
  });
  const url = `http://127.0.0.1:${port}/`;
  await waitHttp(proc, url);
  return { proc, url };
}
