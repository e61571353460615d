export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEST_IMAGE = process.env.TEST_IMAGE ?? 'local/busybox:1';

/**
 * E2E_RUNTIME=swarm (the e2e-swarm project) starts every stack's worker with RUNTIME=swarm on the
 * dev stack's swarm engine, pushing images to the dev registry: the same tests, Swarm underneath.
 */
export type Runtime = 'docker' | 'swarm';
export const E2E_RUNTIME: Runtime = process.env.E2E_RUNTIME === 'swarm' ? 'swarm' : 'docker';

/**
 * The end-to-end suite has its own database: its worker's reconciler sweeps every row, and must not
 * deploy what the API tests leave queued in theirs. One per runtime, so `e2e` and `e2e-swarm` can
 * run side by side (scripts/test-all.sh).
 */
export function e2eDatabaseUrl(runtime: Runtime): string {
  return (
    process.env.E2E_DATABASE_URL ??
    `postgresql://postgres@127.0.0.1:5432/hostctl_e2e${runtime === 'swarm' ? '_swarm' : ''}_test`
  );
}
export const E2E_DATABASE_URL = e2eDatabaseUrl(E2E_RUNTIME);

/** The worker's settings for a runtime (the project's by default; a Swarm-only file asks for swarm). */
export function runtimeEnv(runtime: Runtime = E2E_RUNTIME): Record<string, string> {
  if (runtime !== 'swarm') return {};
  const swarmHost = process.env.SWARM_DOCKER_HOST ?? '';
  if (!swarmHost.startsWith('unix://'))
    throw new Error('SWARM_DOCKER_HOST is empty: load .data/env.test (scripts/setup-services.sh writes it)');
  return { RUNTIME: 'swarm', SWARM_DOCKER_HOST: swarmHost, REGISTRY: '127.0.0.1:5000' };
}
