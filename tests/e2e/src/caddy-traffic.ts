import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Traffic the way a service's visitors send it: HTTP through the dev stack's Caddy (127.0.0.1:80,
 * scripts/lib/caddy.sh) with the service's host name. Every request opens its own connection, so a
 * route change (Caddy reloads its config and closes idle keep-alive connections) is never mistaken
 * for an outage; what a visitor would see as one (502, refused, timeout) is recorded as an answer.
 *
 * One exception, retried once like browsers and HTTP clients retry an idempotent GET: a connection
 * Caddy resets before any response byte. Caddy 2.6 does that to a connection it is accepting while
 * it applies a new config, whichever route changed (measured: 2 resets in ~10k requests, both at
 * the instant another service's route was added on the shared Caddy), while reading ("read
 * ECONNRESET"), still connecting ("connect ECONNRESET", seen once on 11-26 in a run where the
 * parallel lane changed routes too) or while the request is written ("write ECONNRESET", seen once
 * in ~29k requests with e2e and e2e-swarm side by side): in every case no response came. Each
 * retry is counted and printed; a 5xx is never retried, and a second reset is a failure.
 */
const CADDY = new URL(process.env.E2E_CADDY_HTTP_URL ?? 'http://127.0.0.1:80');
export const APPS_DOMAIN = process.env.APPS_DOMAIN ?? 'apps.localhost';

export interface Answer {
  /** HTTP status, or 0 when no answer came (connection refused/reset, timeout). */
  status: number;
  body: string;
  error?: string;
  at: number;
  /** The first attempt was reset by Caddy before any response and this is the retry's answer. */
  wasRetried?: boolean;
}

/** Releases are routed only when the worker has a Caddy: without one these tests prove nothing. */
export function requireCaddy(): void {
  if (!process.env.CADDY_ADMIN_URL)
    throw new Error('CADDY_ADMIN_URL is empty: load .data/env.test (scripts/setup-services.sh writes it)');
}

export async function viaCaddy(host: string, timeoutMs = 5000, path = '/'): Promise<Answer> {
  const first = await attempt(host, timeoutMs, path);
  if (first.status !== 0 || !/^(read|write|connect) ECONNRESET\b/.test(first.error ?? '')) return first;
  return { ...(await attempt(host, timeoutMs, path)), wasRetried: true };
}

function attempt(host: string, timeoutMs: number, path: string): Promise<Answer> {
  const at = Date.now();
  return new Promise((resolve) => {
    const request = http.get(
      {
        host: CADDY.hostname,
        port: Number(CADDY.port || 80),
        path,
        headers: { host },
        timeout: timeoutMs,
        agent: false,
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: body.trim(), at }));
        response.on('error', (error) => resolve({ status: 0, body, error: error.message, at }));
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', (error) => resolve({ status: 0, body: '', error: error.message, at }));
  });
}

/** `loops` clients in a tight loop, every answer kept, until stop(). */
export function startTraffic(host: string, loops = 2) {
  const answers: Answer[] = [];
  let isStopped = false;
  const runners = Array.from({ length: loops }, async () => {
    while (!isStopped) {
      answers.push(await viaCaddy(host));
      // Yield to the event loop so the test's own API calls are not starved.
      await sleep(5);
    }
  });
  return {
    answers,
    async stop(): Promise<Answer[]> {
      isStopped = true;
      await Promise.all(runners);
      return answers;
    },
  };
}

export const isGood = (answer: Answer) => answer.status >= 200 && answer.status < 300;

/** Counts by body for the 2xx answers, and the others in order, for a readable failure. */
export function tally(answers: Answer[]) {
  const bodies: Record<string, number> = {};
  for (const answer of answers.filter(isGood)) bodies[answer.body] = (bodies[answer.body] ?? 0) + 1;
  const bad = answers
    .filter((answer) => !isGood(answer))
    .map(
      (answer) =>
        `${new Date(answer.at).toISOString().slice(11, 23)} ${answer.status} ${answer.error ?? answer.body.slice(0, 60)}`,
    );
  return {
    total: answers.length,
    bodies,
    bad,
    retried: answers.filter((answer) => answer.wasRetried).length,
  };
}
