import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Everything the benchmarks share. All traffic stays on loopback; the database and the queue
 * prefix are the bench's own, so dev and test data are never touched.
 */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const env = process.env;
const seconds = (name: string, fallback: number) => {
  const value = Number(env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};

export const BENCH = {
  databaseUrl: env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/hostctl_bench',
  redisUrl: env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  dockerSocket: env.BENCH_DOCKER_SOCKET ?? '/var/run/docker.sock',
  /** Redis key prefix and Docker instance label of everything the bench creates. */
  queuePrefix: 'hostctl-bench',
  /** Label on the raw-Docker baseline containers and networks (not hostctl's: no reconciler touches them). */
  rawLabel: 'bench.hostctl.raw',
  image: env.BENCH_IMAGE ?? 'local/busybox:1',
  /** The TLS suite's upstream: a Node HTTP server keeps its connections to Caddy alive (busybox httpd does not). */
  nodeImage: env.BENCH_NODE_IMAGE ?? 'local/node:20',
  sessionSecret: randomBytes(32).toString('hex'),
  ports: {
    api: 39300,
    hello: 39301,
    pg: 39302,
    workerHealth: 39310,
    caddyHttp: 39320,
    caddyAdmin: 39321,
    caddyHttps: 39322,
  },
  /** The workers' default APPS_DOMAIN: service hosts are <name>.apps.localhost. */
  appsDomain: 'apps.localhost',
  /** Seconds of each measured autocannon run (after a 1 s warm-up). */
  durationS: seconds('BENCH_DURATION', 3),
  /** API benchmark: rounds of (baselines, API routes), interleaved so drift hits both; medians reported. */
  rounds: seconds('BENCH_ROUNDS', 3),
  /** Seconds of each list-scaling run: there are many of them. */
  scalingDurationS: seconds('BENCH_SCALING_DURATION', 3),
  deployIterations: seconds('BENCH_DEPLOYS', 8),
  lifecycleIterations: seconds('BENCH_LIFECYCLE', 5),
  /** Release suite: redeploys of each of its two services (start-first, stop-first), alternating. */
  releaseIterations: seconds('BENCH_RELEASES', 4),
  /** Runs suite: one-off runs timed, each against a raw `docker run` of the same command. */
  runIterations: seconds('BENCH_RUNS', 8),
  /** Schedules suite: seconds the measured schedules (every 30 s) fire before their records are read. */
  scheduleSeconds: seconds('BENCH_SCHEDULE_S', 120),
  batchSize: seconds('BENCH_BATCH', 50),
  /** TLS suite: new services whose HTTPS readiness after `succeeded` is measured. */
  tlsDeploys: seconds('BENCH_TLS_DEPLOYS', 5),
  /**
   * WORKER_CONCURRENCY of each process in the worker-scaling batches. 1 by default, so each added
   * replica adds capacity and the figure shows how throughput follows replicas; with the
   * production default (4) one process already saturates the Docker engine of a 2-core host.
   */
  scalingConcurrency: seconds('BENCH_SCALING_CONCURRENCY', 1),
  /** Fairness suite: deploys one customer queues at once, and the other customer's deploys timed idle and under them. */
  fairnessFlood: seconds('BENCH_FAIRNESS_FLOOD', 100),
  fairnessSamples: seconds('BENCH_FAIRNESS_SAMPLES', 5),
  /** Density suite: the service counts compared, the idle window at each, the log lines timed. */
  densityServices: seconds('BENCH_DENSITY', 500),
  densityBase: seconds('BENCH_DENSITY_BASE', 10),
  densityIdleS: seconds('BENCH_DENSITY_IDLE', 40),
  densityLogSamples: seconds('BENCH_DENSITY_LOG_SAMPLES', 20),
} as const;

/** The bench truncates its database: refuse anything that is not obviously a bench database. */
export function assertBenchDatabase(url: string): void {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!/bench/i.test(name)) {
    throw new Error(
      `refusing to use database "${name}": the bench truncates it, its name must contain "bench"`,
    );
  }
}
