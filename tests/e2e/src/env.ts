/**
 * The end-to-end suite has its own database: its worker's reconciler sweeps every row, and must not
 * deploy what the API tests leave queued in theirs.
 */
export const E2E_DATABASE_URL =
  process.env.E2E_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/hostctl_e2e_test';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEST_IMAGE = process.env.TEST_IMAGE ?? 'local/busybox:1';
