import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { ROOT } from './docker-helpers.js';

export const COMPOSE_FILE = path.join(ROOT, 'docker/compose.yml');
const EMPTY_ENV_FILE = path.join(mkdtempSync(path.join(tmpdir(), 'compose-env-')), 'empty.env');
writeFileSync(EMPTY_ENV_FILE, '');

/** Every required setting of docker/compose.yml, with placeholder values. */
export const REQUIRED_ENV = {
  API_DOMAIN: 'hostctl.example.com',
  APPS_DOMAIN: 'apps.example.com',
  ACME_EMAIL: 'ops@example.com',
  PUBLIC_IP: '203.0.113.10',
  OIDC_ISSUER: 'https://id.example.com',
  OIDC_CLIENT_ID: 'hostctl',
  DOCKER_GID: '999',
};

export interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string; args?: Record<string, string> };
  command?: string[] | string;
  environment?: Record<string, string | null>;
  secrets?: { source: string }[] | string[];
  depends_on?: Record<string, { condition: string }>;
  networks?: Record<string, unknown>;
  network_mode?: string;
  /** docker-compose 1.29 prints a port with a host address in the short form `ip:published:target/proto`. */
  ports?: ({ host_ip?: string; published: number | string; target: number; protocol?: string } | string)[];
  volumes?: string[];
}
export interface ComposeConfig {
  services: Record<string, ComposeService>;
  secrets: Record<string, { file: string }>;
  networks: Record<string, { internal?: boolean; name?: string }>;
}

/**
 * `docker-compose config` (Debian's docker-compose 1.29) with only the given environment: the
 * operator's shell must not leak into the check. Rejects with compose's message on an invalid file.
 */
export async function runCompose(env: Record<string, string>, args: string[] = []): Promise<string> {
  // An empty --env-file: an operator's docker/.env must not leak into the check either.
  const { stdout } = await promisify(execFile)(
    'docker-compose',
    ['--env-file', EMPTY_ENV_FILE, '-f', COMPOSE_FILE, 'config', ...args],
    {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      timeout: 60_000,
    },
  );
  return stdout;
}

export async function composeConfig(overrides: Record<string, string> = {}): Promise<ComposeConfig> {
  return parse(await runCompose({ ...REQUIRED_ENV, ...overrides })) as ComposeConfig;
}

/** A published port as { hostIp, target }, whichever form compose printed it in. */
export function portOf(port: NonNullable<ComposeService['ports']>[number]): {
  hostIp: string | undefined;
  target: number;
} {
  if (typeof port !== 'string') return { hostIp: port.host_ip, target: Number(port.target) };
  const parts = port.replace(/\/\w+$/, '').split(':');
  return { hostIp: parts.length === 3 ? parts[0] : undefined, target: Number(parts.at(-1)) };
}

/** docker/caddy.json.template as far as the tests read it. */
export interface CaddyTemplateConfig {
  admin: { listen: string };
  apps: {
    http: {
      http_port?: number;
      https_port?: number;
      servers: Record<
        string,
        {
          listen: string[];
          automatic_https?: Record<string, unknown>;
          tls_connection_policies?: Record<string, unknown>[];
          routes: { '@id': string }[];
        }
      >;
    };
    tls: {
      certificates: { automate?: string[]; load_pem?: unknown[] };
      automation: { policies: { issuers: { module: string; email?: string; ca?: string }[] }[] };
    };
  };
}

/**
 * The template with the names filled in, as the caddy service's command does with sed at start
 * (docker/compose.yml).
 */
export function renderCaddyTemplate(values: { API_DOMAIN: string; ACME_EMAIL: string }): CaddyTemplateConfig {
  const text = readFileSync(path.join(ROOT, 'docker/caddy.json.template'), 'utf8')
    .replaceAll('__API_DOMAIN__', values.API_DOMAIN)
    .replaceAll('__ACME_EMAIL__', values.ACME_EMAIL);
  if (text.includes('__'))
    throw new Error('docker/caddy.json.template has a placeholder the command does not fill');
  return JSON.parse(text) as CaddyTemplateConfig;
}
