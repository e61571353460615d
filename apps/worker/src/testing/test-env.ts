/**
 * The worker tests get their own database: the reconciler sweeps every row, and must not pick up
 * (and deploy) rows that API tests create in theirs.
 */
export const TEST_DATABASE_URL =
  process.env.WORKER_TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/hostctl_worker_test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEST_IMAGE = 'local/busybox:1';
/** The swarm engine holds no local images: it pulls the stack's busybox from the platform registry. */
export const SWARM_TEST_IMAGE = '127.0.0.1:5000/busybox:1';

/** The swarm engine's socket (scripts/lib/swarm-engine.sh writes SWARM_DOCKER_HOST into the env file). */
export function swarmTestSocket(): string {
  const host = process.env.SWARM_DOCKER_HOST;
  if (!host?.startsWith('unix://'))
    throw new Error('SWARM_DOCKER_HOST is not set: run scripts/setup-services.sh, then load its env file');
  return host.slice('unix://'.length);
}
