import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run, TOKEN } from '../test-support/fake-api.js';

/**
 * A server at HOSTCTL_URL that answers with a redirect to another origin (a proxy misconfigured,
 * or a host taken over) must not get the CLI to send anything there: Node's fetch drops the
 * Authorization header across origins but resends a 307/308's body, which for `services create`
 * holds the service's variables. Real HTTP servers and Node's own fetch, not the fake.
 */
let redirector: Server;
let elsewhere: Server;
let redirectorUrl: string;
let elsewhereUrl: string;
let status = 307;
const reachedElsewhere: { method: string; url: string; authorization: string | undefined; body: string }[] =
  [];

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

beforeAll(async () => {
  elsewhere = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      reachedElsewhere.push({
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization,
        body,
      });
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id: 'x', name: 'web', deploy_job_id: 'd', status: 'deploying' }));
    });
  });
  elsewhereUrl = await listen(elsewhere);
  redirector = createServer((request, response) => {
    response.writeHead(status, { location: `${elsewhereUrl}${request.url ?? '/'}` }).end();
  });
  redirectorUrl = await listen(redirector);
});
afterAll(async () => {
  await new Promise((resolve) => redirector.close(resolve));
  await new Promise((resolve) => elsewhere.close(resolve));
});
beforeEach(() => {
  reachedElsewhere.length = 0;
});

describe('a redirect from HOSTCTL_URL', () => {
  for (const code of [301, 302, 303, 307, 308]) {
    it(`(${code}) is reported and not followed: nothing, body or token, reaches the other origin`, async () => {
      status = code;
      const result = await run(
        [
          'services',
          'create',
          '--name',
          'web',
          '--method',
          'template',
          '--template',
          'nginx',
          '--var',
          'DB_PASSWORD=hunter2',
        ],
        fetch,
        { HOSTCTL_URL: redirectorUrl, HOSTCTL_TOKEN: TOKEN },
      );
      expect(reachedElsewhere).toEqual([]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`redirect (${code}) to ${elsewhereUrl}/api/services`);
      expect(result.stderr).toContain('does not follow redirects');
      expect(`${result.stdout}${result.stderr}`).not.toContain(TOKEN);
    });
  }

  it('on a read is reported the same way (no answer from another server is taken for the API’s)', async () => {
    status = 302;
    const result = await run(['services', 'list'], fetch, {
      HOSTCTL_URL: redirectorUrl,
      HOSTCTL_TOKEN: TOKEN,
    });
    expect(reachedElsewhere).toEqual([]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('redirect (302)');
  });
});
