import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The fault suite's own database, Redis and queue prefix: it kills and restarts things, so it
 * shares nothing with the other suites but the Docker engine (whose objects carry its own
 * installation label) and the PostgreSQL server (reached through a proxy it can cut).
 */
export const FAULT_DATABASE_URL =
  process.env.FAULT_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/hostctl_fault_test';
export const TEST_IMAGE = process.env.TEST_IMAGE ?? 'local/busybox:1';
export const DOCKER_SOCKET = process.env.DOCKER_SOCKET ?? '/var/run/docker.sock';
/** Restarting the shared engine disturbs every other user of it: only when asked (CI runs this suite alone). */
export const RESTART_DOCKER = process.env.FAULT_RESTART_DOCKER === '1';
export const CADDY_ADMIN_URL = process.env.FAULT_CADDY_ADMIN_URL ?? '';
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const LOG_DIR = path.join(ROOT, '.data/logs/fault');
