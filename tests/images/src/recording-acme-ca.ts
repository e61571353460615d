import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in ACME CA on loopback that records the names of every order it is sent and issues
 * nothing (each newOrder answers `rejectedIdentifier`). Just enough of RFC 8555 for an ACME client
 * to reach newOrder: the directory (§7.1.1), nonces (§7.2), an account (§7.3). What matters is
 * whom a client asks a certificate for, not a certificate: Caddy's own ACME client pointed here
 * shows which names its automatic HTTPS manages, where the real CA would count them against the
 * rate limits (docs/tls.md#why-one-wildcard).
 */
export interface RecordingAcmeCa {
  directoryUrl: string;
  /** The identifiers of each newOrder received, in order. */
  orders: string[][];
  /** Resolves once an order naming `name` has come in (at once if one did already). */
  orderFor(name: string): Promise<void>;
  close(): Promise<void>;
}

interface JwsBody {
  payload?: string;
}

export async function startRecordingAcmeCa(): Promise<RecordingAcmeCa> {
  const orders: string[][] = [];
  const waiting: { name: string; resolve: () => void }[] = [];
  let nonce = 0;
  let base = '';
  const server = http.createServer((request, response) => {
    let raw = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (raw += chunk));
    request.on('end', () => {
      response.setHeader('Replay-Nonce', `nonce-${(nonce += 1)}`);
      response.setHeader('Cache-Control', 'no-store');
      const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        const type = status >= 400 ? 'application/problem+json' : 'application/json';
        response.writeHead(status, { 'Content-Type': type, ...headers });
        response.end(JSON.stringify(body));
      };
      switch (request.url) {
        case '/dir':
          return answer(200, {
            newNonce: `${base}/nonce`,
            newAccount: `${base}/account`,
            newOrder: `${base}/order`,
            revokeCert: `${base}/revoke`,
            keyChange: `${base}/key-change`,
          });
        case '/nonce':
          response.writeHead(request.method === 'HEAD' ? 200 : 204);
          return response.end();
        case '/account':
          return answer(
            201,
            { status: 'valid', orders: `${base}/account/1/orders` },
            { Location: `${base}/account/1` },
          );
        case '/order': {
          const payload = JSON.parse(
            Buffer.from((JSON.parse(raw) as JwsBody).payload ?? '', 'base64url').toString('utf8') || '{}',
          ) as { identifiers?: { value: string }[] };
          const names = (payload.identifiers ?? []).map((identifier) => identifier.value);
          orders.push(names);
          for (const waiter of waiting.filter((entry) => names.includes(entry.name))) waiter.resolve();
          return answer(400, {
            type: 'urn:ietf:params:acme:error:rejectedIdentifier',
            detail: 'this test CA issues nothing',
          });
        }
        default:
          return answer(404, { type: 'about:blank', detail: 'not part of the test CA' });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    directoryUrl: `${base}/dir`,
    orders,
    orderFor(name) {
      if (orders.some((names) => names.includes(name))) return Promise.resolve();
      return new Promise((resolve) => waiting.push({ name, resolve }));
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
