import type { Queue } from 'bullmq';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { periodicTimings, type PeriodicTiming } from '../health/periodic.js';

/**
 * The worker's Prometheus metrics, one registry per app (no global default registry: tests build
 * several apps in one process). Queue gauges are read from Redis at scrape time, so every replica
 * reports the same installation-wide depth; counters and histograms are this replica's own.
 */
export type JobOutcome = 'completed' | 'failed' | 'retry' | 'delayed';
export type RepairKind =
  | 'deploy_requeued'
  | 'delete_requeued'
  | 'orphan_removed'
  | 'stray_set_removed'
  | 'service_restored'
  | 'service_failed';
export type LockScope = 'service' | 'reconciler' | 'dns_zone';

const JOB_STATES = ['wait', 'active', 'delayed', 'prioritized', 'failed'] as const;
const SCRAPE_TIMEOUT_MS = 2000;

export function createWorkerMetrics(options: { queues: () => Queue[] }) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  new Gauge({
    name: 'hostctl_queue_jobs',
    help: 'Jobs per queue and state (installation-wide, read from Redis at scrape time).',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      for (const queue of options.queues()) {
        const counts = await withTimeout(queue.getJobCounts(...JOB_STATES)).catch(() => null);
        if (!counts) continue;
        for (const state of JOB_STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
      }
    },
  });
  new Gauge({
    name: 'hostctl_queue_oldest_waiting_job_age_seconds',
    help: 'Age of the oldest job waiting for a worker (0 when none), since it became eligible to run.',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      for (const queue of options.queues()) {
        const [oldest] = await withTimeout(queue.getJobs(['wait'], 0, 0, true)).catch(() => [undefined]);
        this.set({ queue: queue.name }, oldest ? Math.max(0, Date.now() - eligibleSince(oldest)) / 1000 : 0);
      }
    },
  });

  // Every periodic task (health, resources, scheduler, relay…): a sweep nearing its interval is
  // work growing with the number of services.
  const periodicGauge = (name: string, help: string, read: (timing: PeriodicTiming) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['task'],
      registers: [registry],
      collect() {
        for (const [task, timing] of periodicTimings()) this.set({ task }, read(timing));
      },
    });
  periodicGauge(
    'hostctl_periodic_sweep_last_seconds',
    'Duration of the last sweep of each periodic task on this replica.',
    (timing) => timing.lastSeconds,
  );
  periodicGauge(
    'hostctl_periodic_sweep_max_seconds',
    'Longest sweep of each periodic task on this replica since it started.',
    (timing) => timing.maxSeconds,
  );
  periodicGauge(
    'hostctl_periodic_interval_seconds',
    'Pause between the sweeps of each periodic task (a sweep starts this long after the last ended).',
    (timing) => timing.intervalSeconds,
  );

  const jobDuration = new Histogram({
    name: 'hostctl_job_duration_seconds',
    help: 'Time a job spent in this worker, by queue, job name and outcome.',
    labelNames: ['queue', 'job', 'outcome'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers: [registry],
  });
  const activeJobs = new Gauge({
    name: 'hostctl_worker_active_jobs',
    help: 'Jobs this replica is running right now, by queue.',
    labelNames: ['queue'],
    registers: [registry],
  });
  const jobs = new Counter({
    name: 'hostctl_jobs_total',
    help: 'Jobs run by this worker: completed, failed (final), retry (will run again), delayed (service busy).',
    labelNames: ['queue', 'job', 'outcome'],
    registers: [registry],
  });
  const stalled = new Counter({
    name: 'hostctl_jobs_stalled_total',
    help: 'Jobs this worker found stalled (their worker died or lost its lock) and handed back to the queue.',
    labelNames: ['queue'],
    registers: [registry],
  });
  const sweeps = new Counter({
    name: 'hostctl_reconciler_sweeps_total',
    help: 'Reconciler sweeps on this replica: ok, error, or skipped (another replica held the sweep lock).',
    labelNames: ['result'],
    registers: [registry],
  });
  const sweepDuration = new Histogram({
    name: 'hostctl_reconciler_sweep_duration_seconds',
    help: 'Duration of the reconciler sweeps this replica ran.',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const lastSweep = new Gauge({
    name: 'hostctl_reconciler_last_sweep_timestamp_seconds',
    help: 'Unix time of the last sweep this replica completed.',
    registers: [registry],
  });
  const repairs = new Counter({
    name: 'hostctl_reconciler_repairs_total',
    help: 'Repairs made by the reconciler on this replica, by kind.',
    labelNames: ['kind'],
    registers: [registry],
  });
  const lockContended = new Counter({
    name: 'hostctl_lock_contended_total',
    help: 'Advisory lock attempts that found the lock held by another job or replica.',
    labelNames: ['scope'],
    registers: [registry],
  });
  const lockWait = new Histogram({
    name: 'hostctl_lock_wait_seconds',
    help: 'Time spent waiting for an advisory lock (acquire with a bound), by outcome.',
    labelNames: ['scope', 'outcome'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const consuming = new Gauge({
    name: 'hostctl_worker_consuming',
    help: '1 while the queue consumer of this replica is running and taking jobs, else 0.',
    labelNames: ['queue'],
    registers: [registry],
  });
  const loopRestarts = new Counter({
    name: 'hostctl_worker_loop_restarts_total',
    help: 'Times the watchdog restarted a queue consumer whose loop had stopped.',
    labelNames: ['queue'],
    registers: [registry],
  });

  return {
    registry,
    jobStarted(queue: string): void {
      activeJobs.inc({ queue });
    },
    jobFinished(queue: string, job: string, outcome: JobOutcome, seconds: number): void {
      activeJobs.dec({ queue });
      jobs.inc({ queue, job, outcome });
      jobDuration.observe({ queue, job, outcome }, seconds);
    },
    jobStalled(queue: string): void {
      stalled.inc({ queue });
    },
    sweep(result: 'ok' | 'error' | 'skipped', seconds?: number): void {
      sweeps.inc({ result });
      if (seconds === undefined) return;
      sweepDuration.observe(seconds);
      lastSweep.set(Date.now() / 1000);
    },
    repaired(kind: RepairKind, count = 1): void {
      if (count > 0) repairs.inc({ kind }, count);
    },
    lockContended(scope: LockScope): void {
      lockContended.inc({ scope });
    },
    lockWaited(scope: LockScope, outcome: 'acquired' | 'timeout', seconds: number): void {
      lockWait.observe({ scope, outcome }, seconds);
    },
    consuming(queue: string, isConsuming: boolean): void {
      consuming.set({ queue }, isConsuming ? 1 : 0);
    },
    loopRestarted(queue: string): void {
      loopRestarts.inc({ queue });
    },
  };
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;

/** A retried or delayed job waits from its last attempt, not from when it was first added. */
function eligibleSince(job: {
  timestamp: number;
  delay?: number;
  processedOn?: number;
  finishedOn?: number;
}) {
  return Math.max(job.timestamp + (job.delay ?? 0), job.processedOn ?? 0, job.finishedOn ?? 0);
}

/** A scrape must not hang on an unreachable Redis: the gauge keeps its last value instead. */
function withTimeout<T>(promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('timeout')), SCRAPE_TIMEOUT_MS).unref(),
    ),
  ]);
}
