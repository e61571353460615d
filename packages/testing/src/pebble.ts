import { readFileSync } from 'node:fs';
import https from 'node:https';

/**
 * The root the dev stack's pebble signs certificates with in this run (it makes a new one at each
 * start): what a test or the bench trusts. `listenerCaFile` makes pebble's own management listener
 * trusted (ACME_CA_CERT_FILE in .data/env.test).
 */
export function pebbleRoot(
  listenerCaFile: string,
  managementUrl = process.env.PEBBLE_MANAGEMENT_URL ?? 'https://127.0.0.1:15000',
): Promise<string> {
  return new Promise((resolve, reject) => {
    https
      .get(`${managementUrl}/roots/0`, { ca: readFileSync(listenerCaFile) }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          response.statusCode === 200
            ? resolve(body)
            : reject(new Error(`pebble roots: ${response.statusCode}`)),
        );
      })
      .on('error', reject);
  });
}
