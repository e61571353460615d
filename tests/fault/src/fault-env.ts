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
/** Routing and DNS of the stack under test: the test command's environment (.data/env.test) has both. */
export const CADDY_ADMIN_URL = process.env.FAULT_CADDY_ADMIN_URL ?? process.env.CADDY_ADMIN_URL ?? '';
export const CADDY_SERVER_NAME = process.env.CADDY_SERVER_NAME ?? 'hostctl';
export const PDNS = {
  enabled: process.env.DNS_PROVIDER === 'powerdns',
  url: process.env.PDNS_API_URL ?? 'http://127.0.0.1:8081',
  key: process.env.PDNS_API_KEY ?? '',
  zone: process.env.PDNS_ZONE ?? process.env.APPS_DOMAIN ?? 'apps.localhost',
};
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const LOG_DIR = path.join(ROOT, '.data/logs/fault');
