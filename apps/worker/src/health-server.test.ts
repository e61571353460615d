import { QUEUES } from '@hostctl/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpGet, silentLogger, testConfig, uniquePrefix } from './testing/fixtures.js';
import { createWorkerApp } from './worker-app.js';

const app = createWorkerApp(testConfig(uniquePrefix('health')), {
  logger: silentLogger,
  reconcile: false,
});

beforeAll(() => app.start());
afterAll(async () => {
  for (const name of Object.values(QUEUES)) await app.producer.queue(name).obliterate({ force: true });
  await app.close(1000);
});

describe('health endpoints', () => {
  it('answers /livez and /readyz with every dependency checked', async () => {
    expect(await httpGet('127.0.0.1', app.healthPort, '/livez')).toEqual({
      status: 200,
      body: '{"status":"ok"}',
    });
    const ready = await httpGet('127.0.0.1', app.healthPort, '/readyz');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({
      status: 'ok',
      checks: { postgres: 'ok', redis: 'ok', docker: 'ok' },
    });
    expect((await httpGet('127.0.0.1', app.healthPort, '/nope')).status).toBe(404);
  });

  it('serves Prometheus metrics, queue depth included', async () => {
    const metrics = await httpGet('127.0.0.1', app.healthPort, '/metrics');
    expect(metrics.status).toBe(200);
    for (const name of [
      'hostctl_queue_jobs{queue="deployments",state="wait"} 0',
      'hostctl_queue_oldest_waiting_job_age_seconds{queue="operations"} 0',
      'hostctl_worker_consuming{queue="deployments"} 1',
      '# TYPE hostctl_job_duration_seconds histogram',
      '# TYPE hostctl_reconciler_repairs_total counter',
      '# TYPE hostctl_jobs_stalled_total counter',
      '# TYPE hostctl_lock_wait_seconds histogram',
      // Read from PostgreSQL at scrape time (docs/backups.md#metrics).
      '# TYPE hostctl_backup_last_success_timestamp_seconds gauge',
      '# TYPE hostctl_backup_failures_last_24h gauge',
    ])
      expect(metrics.body).toContain(name);
  });
});
