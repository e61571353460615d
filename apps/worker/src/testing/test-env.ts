/**
 * The worker tests get their own database: the reconciler sweeps every row, and must not pick up
 * (and deploy) rows that API tests create in theirs.
 */
export const TEST_DATABASE_URL =
  process.env.WORKER_TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/hostctl_worker_test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEST_IMAGE = 'local/busybox:1';
