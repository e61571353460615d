import https from 'node:https';

/** One HTTP exchange with the CA; bodies are small JSON or a PEM chain. */
export interface AcmeResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const TIMEOUT_MS = 15_000;
const MAX_BODY = 1024 * 1024;

/**
 * HTTPS to the ACME directory. `ca` (the PEM of ACME_CA_CERT_FILE) replaces the system trust for
 * a test CA such as pebble; empty keeps the system's.
 */
export function createAcmeHttp(ca: string) {
  return (method: 'GET' | 'HEAD' | 'POST', url: string, body?: string): Promise<AcmeResponse> =>
    new Promise((resolve, reject) => {
      const request = https.request(
        url,
        {
          method,
          timeout: TIMEOUT_MS,
          ...(ca !== '' ? { ca } : {}),
          headers: {
            'user-agent': 'hostctl-acme/1',
            ...(body !== undefined ? { 'content-type': 'application/jose+json' } : {}),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BODY) request.destroy(new Error(`ACME response from ${url} is too large`));
            else chunks.push(chunk);
          });
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error(`ACME request to ${url} timed out`)));
      request.on('error', reject);
      request.end(body);
    });
}

export type AcmeHttp = ReturnType<typeof createAcmeHttp>;
