import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { pebbleRoot as pebbleRootOf } from '@hostctl/testing';
import { BENCH } from './config.js';

/**
 * What the TLS suite needs from the dev stack's pebble and PowerDNS (docs/tls.md#in-the-dev-stack):
 * the bench worker orders its own wildcard from pebble through DNS-01 on PowerDNS, exactly as
 * production does, and the bench then trusts pebble's root of this run, nothing else.
 */
export const WILDCARD = `*.${BENCH.appsDomain}`;

function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(`${name} is not set: run the tls suite from a shell that loaded .data/env (docs/tls.md)`);
  return value;
}

/** The bench worker's TLS settings: pebble, the stack's PowerDNS for DNS-01, the bench Caddy's HTTPS port. */
export function tlsWorkerEnv(caddyAdminUrl: string): Record<string, string> {
  return {
    CADDY_ADMIN_URL: caddyAdminUrl,
    CADDY_HTTPS_LISTEN: `127.0.0.1:${BENCH.ports.caddyHttps}`,
    ACME_DIRECTORY_URL: required('PEBBLE_DIRECTORY_URL'),
    ACME_CA_CERT_FILE: required('ACME_CA_CERT_FILE'),
    // Only for the _acme-challenge TXT value, which the worker removes after the order: with
    // DNS_PROVIDER=none no service record is published in the stack's zone.
    PDNS_API_URL: process.env.PDNS_API_URL ?? 'http://127.0.0.1:8081',
    PDNS_API_KEY: required('PDNS_API_KEY'),
    PDNS_ZONE: process.env.PDNS_ZONE ?? BENCH.appsDomain,
    APPS_DOMAIN: BENCH.appsDomain,
  };
}

/** The root pebble signs with in this run (a new one at each pebble start): what the bench trusts. */
export const pebbleRoot = (): Promise<string> => pebbleRootOf(required('ACME_CA_CERT_FILE'));

export interface Answer {
  status: number;
  body: string;
  location: string | undefined;
  /** HTTPS only: the certificate's names, checked against `ca` and the host (else the request fails). */
  subjectAltName?: string;
  /** HTTPS only: the negotiated protocol, e.g. TLSv1.3. */
  protocol?: string;
  ms: number;
}

/**
 * One GET through the bench Caddy on a new connection (as a new visitor's first request):
 * `https` trusts only `ca` and checks the name, so a certificate from another CA or for
 * another name fails the request instead of answering.
 */
export function getOnce(scheme: 'http' | 'https', host: string, ca: string): Promise<Answer> {
  const t0 = performance.now();
  const common = { host: '127.0.0.1', path: '/', headers: { host }, timeout: 5000, agent: false };
  return new Promise((resolve, reject) => {
    const onResponse = (response: http.IncomingMessage) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body,
          location: response.headers.location,
          ...(scheme === 'https' ? tlsDetails(response.socket as TLSSocket) : {}),
          ms: performance.now() - t0,
        }),
      );
    };
    const request =
      scheme === 'https'
        ? https.get({ ...common, port: BENCH.ports.caddyHttps, servername: host, ca }, onResponse)
        : http.get({ ...common, port: BENCH.ports.caddyHttp }, onResponse);
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}

function tlsDetails(socket: TLSSocket): Pick<Answer, 'subjectAltName' | 'protocol'> {
  return {
    subjectAltName: socket.getPeerCertificate().subjectaltname,
    protocol: socket.getProtocol() ?? 'unknown',
  };
}

/**
 * Waits until Caddy serves the wildcard the bench worker ordered at its start: a trusted HTTPS
 * answer (the catch-all's 404) for a name no service has. Fails with the row's last_error.
 */
export async function awaitWildcard(pool: pg.Pool, ca: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastProblem = '';
  for (;;) {
    try {
      const answer = await getOnce('https', `tls-probe.${BENCH.appsDomain}`, ca);
      if (answer.subjectAltName === `DNS:${WILDCARD}`) return;
      lastProblem = `served names ${answer.subjectAltName ?? 'none'}`;
    } catch (error) {
      lastProblem = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) {
      const { rows } = await pool.query<{ last_error: string | null }>(
        'SELECT last_error FROM tls_certificates WHERE name = $1',
        [WILDCARD],
      );
      throw new Error(
        `no trusted wildcard served within ${timeoutMs} ms (${lastProblem}; last_error: ${rows[0]?.last_error ?? 'no row'})`,
      );
    }
    await sleep(250);
  }
}

/** How many times the wildcard was ordered (tls_certificates.issued_count); 0 without a row. */
export async function issuedCount(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ issued_count: number }>(
    'SELECT issued_count FROM tls_certificates WHERE name = $1',
    [WILDCARD],
  );
  return rows[0]?.issued_count ?? 0;
}

/** The bench database's wildcard row: dropped before the suite (ordered in-run) and after it. */
export async function dropWildcard(pool: pg.Pool): Promise<void> {
  await pool.query('DELETE FROM tls_certificates WHERE name = $1', [WILDCARD]);
}
