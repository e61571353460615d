import { execFile } from 'node:child_process';
import { randomUUID, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { freePort } from '@hostctl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCaddy, type CaddyProcess } from './caddy-process.js';
import { REQUIRED_ENV, renderCaddyTemplate, type CaddyTemplateConfig } from './compose-config.js';
import { startRecordingAcmeCa, type RecordingAcmeCa } from './recording-acme-ca.js';

// docker/caddy.json.template run by the real Caddy, with the service names served the way the
// worker serves them (docs/tls.md#production-compose): one wildcard loaded through the admin API,
// never a certificate per service name from the public CA (50 per registered domain per week).
// Production-true but for what a test on a shared machine must change (forLoopback below).
const API_DOMAIN = 'api.test';
const APPS_DOMAIN = 'apps.test';
const SERVICE_HOST = `svc.${APPS_DOMAIN}`;
const INSTANCE = 'hostctl'; // compose's QUEUE_PREFIX: the worker's @ids carry it

/**
 * What the test changes in the rendered template, and only that: loopback ports instead of
 * :80/:443 and 2019 (the dev stack's Caddy holds those), the same ports as http_port/https_port
 * (as an operator moving Caddy's ports would set them, docs/tls.md#https-and-plain-http), the
 * ACME issuer pointed at the recording CA instead of Let's Encrypt, and the API replicas'
 * upstreams at a stand-in.
 */
function forLoopback(
  config: CaddyTemplateConfig,
  ports: { admin: number; http: number; https: number; api: number },
  caUrl: string,
): CaddyTemplateConfig {
  const copy = structuredClone(config);
  const apiRoute = copy.apps.http.servers.hostctl!.routes.find((route) => route['@id'] === 'hostctl-api') as
    { handle: { upstreams: { dial: string }[] }[] } | undefined;
  apiRoute!.handle[0]!.upstreams = [{ dial: `127.0.0.1:${ports.api}` }];
  copy.admin.listen = `127.0.0.1:${ports.admin}`;
  copy.apps.http.http_port = ports.http;
  copy.apps.http.https_port = ports.https;
  const server = copy.apps.http.servers.hostctl!;
  server.listen = server.listen.map((address) =>
    address === ':80' ? `127.0.0.1:${ports.http}` : address === ':443' ? `127.0.0.1:${ports.https}` : address,
  );
  for (const policy of copy.apps.tls.automation.policies)
    for (const issuer of policy.issuers) if (issuer.module === 'acme') issuer.ca = caUrl;
  return copy;
}

/** A self-signed certificate for *.apps.test, as the worker's wildcard would be (but not from a CA). */
async function wildcardCertificate(): Promise<{ certificate: string; key: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wildcard-'));
  try {
    await promisify(execFile)('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
      '-subj', `/CN=*.${APPS_DOMAIN}`, '-addext', `subjectAltName=DNS:*.${APPS_DOMAIN}`,
      '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'),
    ]); // prettier-ignore
    return {
      certificate: readFileSync(path.join(dir, 'cert.pem'), 'utf8'),
      key: readFileSync(path.join(dir, 'key.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A TLS handshake with Caddy's HTTPS listener for `servername`; the certificate it served. */
function handshake(port: number, servername: string, options: tls.ConnectionOptions = {}) {
  return new Promise<X509Certificate>((resolve, reject) => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port,
      servername,
      rejectUnauthorized: false,
      ...options,
    });
    socket.once('secureConnect', () => {
      const served = socket.getPeerX509Certificate();
      socket.end();
      if (served) resolve(served);
      else reject(new Error('no certificate'));
    });
    socket.once('error', reject);
  });
}

/** GET over plain HTTP through Caddy's HTTP listener (redirects are not followed). */
function plainGet(port: number, host: string, requestPath: string) {
  return new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: requestPath, headers: { host }, agent: false }, (response) => {
        response.resume();
        resolve({ status: response.statusCode ?? 0, location: response.headers.location });
      })
      .once('error', reject);
  });
}

let ca: RecordingAcmeCa;
let caddy: CaddyProcess;
let upstream: http.Server;
let api: http.Server;
let ports: { admin: number; http: number; https: number; api: number };
let wildcard: { certificate: string; key: string };

beforeAll(async () => {
  ca = await startRecordingAcmeCa();
  wildcard = await wildcardCertificate();
  upstream = http.createServer((_request, response) => response.end('hello from svc'));
  api = http.createServer((_request, response) => response.end('the API'));
  for (const server of [upstream, api])
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  ports = {
    admin: await freePort(),
    http: await freePort(),
    https: await freePort(),
    api: (api.address() as AddressInfo).port,
  };
  const config = renderCaddyTemplate({ API_DOMAIN, ACME_EMAIL: REQUIRED_ENV.ACME_EMAIL });
  caddy = await startCaddy(forLoopback(config, ports, ca.directoryUrl));
});

afterAll(async () => {
  await caddy?.stop();
  await ca?.close();
  upstream?.close();
  api?.close();
});

// A broken check waits for an order or a log line that never comes: fail in seconds, not at 300 s.
describe('docker/caddy.json.template under the real Caddy', { timeout: 20_000 }, () => {
  it("orders the API domain's certificate itself, from the configured ACME CA", async () => {
    // Also what makes the absence checks below mean something: this CA does see Caddy's orders.
    await ca.orderFor(API_DOMAIN);
  });

  it('serves a service name with the loaded wildcard and orders no certificate for it', async () => {
    // The reconciler may put routes back before the keeper loads the wildcard (a restarted Caddy):
    // the route first, so no loaded certificate is what keeps Caddy from ordering.
    const routeId = `hostctl-svc-${randomUUID()}`;
    const route = {
      '@id': routeId,
      match: [{ host: [SERVICE_HOST] }],
      handle: [
        { handler: 'vars', hostctl_instance: INSTANCE, hostctl_service: routeId },
        {
          handler: 'subroute',
          routes: [
            {
              match: [
                {
                  host: [SERVICE_HOST],
                  protocol: 'http',
                  not: [{ path: ['/.well-known/acme-challenge/*'] }],
                },
              ],
              handle: [
                {
                  handler: 'static_response',
                  status_code: 308,
                  headers: { Location: ['https://{http.request.host}{http.request.uri}'] },
                },
              ],
            },
          ],
        },
        {
          handler: 'reverse_proxy',
          upstreams: [{ dial: `127.0.0.1:${(upstream.address() as AddressInfo).port}` }],
        },
      ],
      terminal: true,
    };
    const server = '/config/apps/http/servers/hostctl';
    // As adapters/caddy-routes.ts: ahead of the catch-all.
    expect((await caddy.admin('PUT', `${server}/routes/0`, route)).status).toBe(200);

    // As tls/caddy-tls.ts load(): not loaded yet, then appended to load_pem.
    const wildcardId = `hostctl-tls-${INSTANCE}`;
    expect((await caddy.admin('GET', `/id/${wildcardId}`)).status).toBe(404);
    const entry = {
      '@id': wildcardId,
      certificate: wildcard.certificate,
      key: wildcard.key,
      tags: [wildcardId],
    };
    expect((await caddy.admin('POST', '/config/apps/tls/certificates/load_pem', entry)).status).toBe(200);

    const served = await handshake(ports.https, SERVICE_HOST);
    expect(served.fingerprint256).toBe(new X509Certificate(wildcard.certificate).fingerprint256);
    expect(await fetchOverTls(SERVICE_HOST, wildcard.certificate)).toBe('hello from svc');
    expect(await plainGet(ports.http, SERVICE_HOST, '/x')).toEqual({
      status: 308,
      location: `https://${SERVICE_HOST}/x`,
    });

    await caddy.logBarrier(randomUUID());
    expect(ca.orders.flat()).not.toContain(SERVICE_HOST);
    expect(caddy.log()).not.toContain(SERVICE_HOST);
  });

  it('refuses a TLS 1.1 handshake', async () => {
    // SECLEVEL=0: OpenSSL 3 would not even offer TLS 1.1 otherwise; the refusal must be Caddy's.
    await expect(
      handshake(ports.https, SERVICE_HOST, {
        minVersion: 'TLSv1',
        maxVersion: 'TLSv1.1',
        ciphers: 'DEFAULT@SECLEVEL=0',
      }),
    ).rejects.toThrow(/alert protocol version/);
  });

  it('redirects plain HTTP for the API domain to HTTPS, but not an ACME challenge', async () => {
    expect(await plainGet(ports.http, API_DOMAIN, '/api/services?limit=1')).toEqual({
      status: 308,
      location: `https://${API_DOMAIN}/api/services?limit=1`,
    });
    // Caddy answers the challenges of its own orders before any route; anything else there goes on.
    const challenge = await plainGet(ports.http, API_DOMAIN, '/.well-known/acme-challenge/token');
    expect(challenge).toEqual({ status: 200, location: undefined });
  });

  it('leaves the worker nothing to add: both listeners on http_port/https_port, TLS 1.2+ policy', async () => {
    // What tls/caddy-tls.ts ensureHttps() reads with CADDY_HTTPS_LISTEN=:443 (compose's worker env).
    const server = '/config/apps/http/servers/hostctl';
    const listen = JSON.parse((await caddy.admin('GET', `${server}/listen`)).text) as string[];
    expect(listen).toEqual([`127.0.0.1:${ports.http}`, `127.0.0.1:${ports.https}`]);
    const policies = JSON.parse(
      (await caddy.admin('GET', `${server}/tls_connection_policies`)).text,
    ) as unknown;
    expect(policies).toEqual([{ protocol_min: 'tls1.2' }]);
  });
});

/** GET https://<host>/ through Caddy's HTTPS listener, trusting only `ca` and checking the name. */
function fetchOverTls(host: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    https
      .get(
        { host: '127.0.0.1', port: ports.https, servername: host, headers: { host }, ca, agent: false },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve(body));
        },
      )
      .once('error', reject);
  });
}
