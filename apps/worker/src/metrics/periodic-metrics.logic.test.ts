import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createPeriodic } from '../health/periodic.js';
import { createWorkerMetrics } from './worker-metrics.js';

/**
 * An operator (and the density bench) reads from /metrics how long each periodic task's sweeps
 * take against its interval: a sweep nearing its interval is work growing with the services.
 */
describe("periodic tasks' sweep durations in the worker's metrics", () => {
  it('reports the last and longest sweep and the interval of each task by name', async () => {
    const sweepMs = [300, 10];
    let sweeps = 0;
    const periodic = createPeriodic(
      'metrics-test-task',
      15,
      async () => {
        await sleep(sweepMs[Math.min(sweeps, sweepMs.length - 1)]);
        sweeps += 1;
      },
      pino({ level: 'silent' }),
    );
    periodic.start();
    await expect.poll(() => sweeps, { timeout: 5000 }).toBeGreaterThanOrEqual(2);
    await periodic.stop();

    const text = await createWorkerMetrics({ queues: () => [] }).registry.metrics();
    const value = (metric: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${metric}{task="metrics-test-task"}`));
      return line === undefined ? undefined : Number(line.split(' ').pop());
    };
    expect(value('hostctl_periodic_interval_seconds')).toBe(0.015);
    expect(value('hostctl_periodic_sweep_max_seconds')).toBeGreaterThanOrEqual(0.29);
    // The last sweep was a short one: last and longest are kept apart.
    expect(value('hostctl_periodic_sweep_last_seconds')).toBeGreaterThanOrEqual(0.009);
    expect(value('hostctl_periodic_sweep_last_seconds')).toBeLessThan(
      value('hostctl_periodic_sweep_max_seconds')!,
    );
  });
});
