import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * FAULT_RUNTIME=swarm runs the same faults with every worker on RUNTIME=swarm, on the dev stack's
 * swarm engine (scripts/lib/swarm-engine.sh): the "Docker restart" is then that engine's.
 */
export type Runtime = 'docker' | 'swarm';
export const FAULT_RUNTIME: Runtime = process.env.FAULT_RUNTIME === 'swarm' ? 'swarm' : 'docker';

/**
 * The fault suite's own database, Redis and queue prefix: it kills and restarts things, so it
 * shares nothing with the other suites but the Docker engines (whose objects carry its own
 * installation label) and the PostgreSQL server (reached through a proxy it can cut). One
 * database per runtime, so the two runs can never deploy each other's rows.
 */
export const FAULT_DATABASE_URL =
  process.env.FAULT_DATABASE_URL ??
  `postgresql://postgres@127.0.0.1:5432/hostctl_fault${FAULT_RUNTIME === 'swarm' ? '_swarm' : ''}_test`;
export const TEST_IMAGE = process.env.TEST_IMAGE ?? 'local/busybox:1';
export const DOCKER_SOCKET = process.env.DOCKER_SOCKET ?? '/var/run/docker.sock';

/** The workers' settings for the runtime under test. */
export function runtimeEnv(): Record<string, string> {
  if (FAULT_RUNTIME !== 'swarm') return {};
  const swarmHost = process.env.SWARM_DOCKER_HOST ?? '';
  if (!swarmHost.startsWith('unix://'))
    throw new Error('SWARM_DOCKER_HOST is empty: load .data/env.test (scripts/setup-services.sh writes it)');
  return {
    RUNTIME: 'swarm',
    SWARM_DOCKER_HOST: swarmHost,
    REGISTRY: process.env.REGISTRY ?? '127.0.0.1:5000',
  };
}
/** Restarting the shared engine disturbs every other user of it: only when asked (CI runs this suite alone). */
export const RESTART_DOCKER = process.env.FAULT_RESTART_DOCKER === '1';
/** Routing and DNS of the stack under test: the test command's environment (.data/env.test) has both. */
/** The swarm engine's unix socket (FAULT_RUNTIME=swarm). */
export const swarmSocketPath = () => runtimeEnv().SWARM_DOCKER_HOST!.replace(/^unix:\/\//, '');
export const CADDY_ADMIN_URL = process.env.FAULT_CADDY_ADMIN_URL ?? process.env.CADDY_ADMIN_URL ?? '';
export const CADDY_SERVER_NAME = process.env.CADDY_SERVER_NAME ?? 'hostctl';
export const PDNS = {
  enabled: process.env.DNS_PROVIDER === 'powerdns',
  url: process.env.PDNS_API_URL ?? 'http://127.0.0.1:8081',
  key: process.env.PDNS_API_KEY ?? '',
  zone: process.env.PDNS_ZONE ?? process.env.APPS_DOMAIN ?? 'apps.localhost',
};
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const LOG_DIR = path.join(ROOT, `.data/logs/fault${FAULT_RUNTIME === 'swarm' ? '-swarm' : ''}`);
