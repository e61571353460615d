import { runCli } from '../cli.js';

/**
 * A stand-in for the API's HTTP answers, passed to runCli as its fetch: routes are
 * "METHOD /path" → a handler returning [status, body] (a function to vary per call). Every request
 * is recorded so tests can check what the CLI asked for (and that it sent the bearer token).
 */
export type Answer = [status: number, body?: unknown, headers?: Record<string, string>];
export type Handler = Answer | ((url: URL, call: number) => Answer);

export interface Recorded {
  method: string;
  url: URL;
  authorization: string | null;
  idempotencyKey: string | null;
  ifMatch: string | null;
  body: string | undefined;
}

export const TOKEN = 'hsk_test_secret_token_value_0123456789';

export function fakeApi(routes: Record<string, Handler>) {
  const requests: Recorded[] = [];
  const calls = new Map<string, number>();
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input);
    const method = init?.method ?? 'GET';
    const headers = new Headers(init?.headers);
    requests.push({
      method,
      url,
      authorization: headers.get('authorization'),
      idempotencyKey: headers.get('idempotency-key'),
      ifMatch: headers.get('if-match'),
      body: typeof init?.body === 'string' ? init.body : undefined,
    });
    const key = `${method} ${url.pathname}`;
    const handler = routes[key];
    if (!handler) return problem(404, 'Not found', `no fake route for ${key}`);
    const call = (calls.get(key) ?? 0) + 1;
    calls.set(key, call);
    const [status, body, extra] = typeof handler === 'function' ? handler(url, call) : handler;
    if (status === 0) throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    if (status >= 400 && body && typeof body === 'object')
      return new Response(JSON.stringify(body), {
        status,
        headers: { 'content-type': 'application/problem+json', ...extra },
      });
    return new Response(body === undefined ? null : JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json', ...extra },
    });
  }) as typeof fetch;
  return { fetchImpl, requests };
}

function problem(status: number, title: string, detail: string): Response {
  return new Response(JSON.stringify({ status, title, detail, code: 'not_found' }), {
    status,
    headers: { 'content-type': 'application/problem+json' },
  });
}

export const problemBody = (status: number, code: string, title: string, detail: string) => ({
  type: `https://hostctl.dev/problems/${code}`,
  status,
  code,
  title,
  detail,
  request_id: 'req-1',
});

/** Runs the CLI against the fake and returns its exit code and both outputs. */
export async function run(
  argv: string[],
  fetchImpl: typeof fetch,
  env: Record<string, string | undefined> = { HOSTCTL_URL: 'https://api.test', HOSTCTL_TOKEN: TOKEN },
  stdin = '',
) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    env,
    fetchImpl,
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    readStdin: async () => stdin,
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}
