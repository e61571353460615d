import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { PeerCertificate } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { pebbleRoot as pebbleRootOf } from '@hostctl/testing';

/** The dev stack's pebble (scripts/lib/pebble.sh): ACME directory and management API on loopback. */
export const PEBBLE_DIRECTORY_URL = process.env.PEBBLE_DIRECTORY_URL ?? 'https://127.0.0.1:14000/dir';

/** The file that makes pebble's own listener trusted (ACME_CA_CERT_FILE in .data/env.test). */
export function pebbleListenerCertFile(): string {
  if (process.env.ACME_CA_CERT_FILE) return process.env.ACME_CA_CERT_FILE;
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../.data/pebble/tls.crt');
}

/** The root pebble signs with in this run (it makes new roots each start): what clients trust. */
export const pebbleRoot = (): Promise<string> => pebbleRootOf(pebbleListenerCertFile());

/**
 * GET https://<host>/ through Caddy's HTTPS listener, trusting only `ca` and checking the name:
 * a certificate that is not from that CA or not for the host fails the request.
 */
export function viaCaddyTls(
  host: string,
  ca: string,
  port = 443,
  options: { path?: string; maxVersion?: 'TLSv1.1' } = {},
): Promise<{
  status: number;
  body: string;
  certificate: PeerCertificate;
  headers: http.IncomingHttpHeaders;
}> {
  return new Promise((resolve, reject) => {
    const request = https.get(
      {
        host: '127.0.0.1',
        port,
        servername: host,
        path: options.path ?? '/',
        headers: { host },
        ca,
        timeout: 5000,
        agent: false,
        // SECLEVEL=0: OpenSSL 3 would not even offer TLS 1.1 otherwise; the refusal must be the server's.
        ...(options.maxVersion
          ? { maxVersion: options.maxVersion, minVersion: 'TLSv1' as const, ciphers: 'DEFAULT@SECLEVEL=0' }
          : {}),
      },
      (response) => {
        const certificate = (response.socket as import('node:tls').TLSSocket).getPeerCertificate();
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body, certificate, headers: response.headers }),
        );
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}

/** A plain-HTTP GET through Caddy's port 80 with its headers (redirects are not followed). */
export function plainHttp(
  host: string,
  path = '/',
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port: 80, path, headers: { host }, timeout: 5000, agent: false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body, headers: response.headers }),
        );
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}
