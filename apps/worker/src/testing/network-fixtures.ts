import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCaddyAdmin } from '../adapters/caddy-admin.js';

/** The dev stack's Caddy and PowerDNS (scripts/setup-services.sh), all on loopback. */
export const CADDY_ADMIN_URL = 'http://127.0.0.1:2019';
/** Tests read and change Caddy through the workers' own client: it rides out Caddy's reload resets. */
export const caddyAdmin = createCaddyAdmin(CADDY_ADMIN_URL);
export const PDNS_API_URL = 'http://127.0.0.1:8081';

/** The PowerDNS key: from the environment (test-all.sh loads .data/env.test) or the stack's env file. */
export function pdnsApiKey(): string {
  if (process.env.PDNS_API_KEY) return process.env.PDNS_API_KEY;
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
  for (const file of ['.data/env.test', '.data/env']) {
    try {
      const line = readFileSync(path.join(root, file), 'utf8')
        .split('\n')
        .find((entry) => entry.startsWith('PDNS_API_KEY='));
      if (line) return line.slice('PDNS_API_KEY='.length).trim();
    } catch {
      // try the next file
    }
  }
  throw new Error('PDNS_API_KEY is unknown: run scripts/setup-services.sh (it writes .data/env)');
}

export async function pdns(method: string, apiPath: string, body?: unknown): Promise<number> {
  const response = await fetch(`${PDNS_API_URL}/api/v1/servers/localhost${apiPath}`, {
    method,
    headers: { 'X-API-Key': pdnsApiKey(), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  await response.text();
  return response.status;
}

/**
 * GET through Caddy's HTTP port with a given Host header, on a fresh connection (reloads close idle
 * ones). A connection Caddy resets before any response byte is asked again once, as browsers and
 * HTTP clients retry an idempotent GET: Caddy 2.6 resets a connection it is accepting while it
 * applies a new config, whichever route changed (tests/e2e/src/caddy-traffic.ts has the same rule
 * and the measurements; under Swarm the update follower applies routes every 500 ms while tasks
 * move, and two CI rehearsals on 11-28 each lost one visitor request this way). A second reset, a
 * 5xx or a timeout is an answer the test sees.
 */
export async function viaCaddy(host: string): Promise<{ status: number; body: string }> {
  try {
    return await attemptViaCaddy(host);
  } catch (error) {
    if (!/^(read|write|connect) ECONNRESET\b/.test((error as Error).message)) throw error;
    return attemptViaCaddy(host);
  }
}

function attemptViaCaddy(host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port: 80, path: '/', headers: { host }, timeout: 3000, agent: false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}
