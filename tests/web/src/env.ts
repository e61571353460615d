/**
 * The dashboard tests have their own database and queue prefix: their worker's reconciler sweeps
 * every row and every Docker object of its instance, and must not touch another suite's.
 */
export const WEB_DATABASE_URL =
  process.env.WEB_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/hostctl_web_test';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Redis key prefix and Docker instance label (`io.hostctl.instance`) of the web test stack. */
export const QUEUE_PREFIX = `hostctl-web-${new URL(WEB_DATABASE_URL).pathname.slice(1).replace(/[^a-z0-9]+/gi, '-')}`;
export const TEST_IMAGE = process.env.TEST_IMAGE ?? 'local/busybox:1';
