import { describe, expect, it } from 'vitest';
import { createComposeService, waitForDeployment } from './testing/fixtures.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// WORKER_CONCURRENCY bounds the jobs one replica runs at once (per queue): with 2, three slow
// deploys of different services run two at a time, never three, and all finish.
const { db, app, created } = useWorkerApp('slots', {
  env: { WORKER_CONCURRENCY: '2' },
  app: { readiness: { timeoutMs: 30_000, stableMs: 300 } },
});
const SLOW =
  'services:\n  web:\n    image: local/busybox:1\n    command: ["sh", "-c", "sleep 2; exec httpd -f -p 8080 -h /www"]\n    ports: ["8080"]\n';

async function activeDeployJobs(): Promise<number> {
  const text = await app.metrics.registry.getSingleMetricAsString('hostctl_worker_active_jobs');
  const match = /hostctl_worker_active_jobs\{queue="deployments"\} (\d+)/.exec(text);
  return Number(match?.[1] ?? 0);
}

describe('per-replica concurrency', () => {
  it('runs at most WORKER_CONCURRENCY jobs at once', async () => {
    for (let i = 0; i < 3; i++) created.push(await createComposeService(db, { compose: SLOW }));
    for (const service of created)
      await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    const seen = new Set<number>();
    const sampler = setInterval(() => void activeDeployJobs().then((count) => seen.add(count)), 50);
    try {
      for (const service of created)
        expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');
    } finally {
      clearInterval(sampler);
    }
    expect(Math.max(...seen)).toBe(2);
  });
});
