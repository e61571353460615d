import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A visitor of one service: requests through Caddy with the service's host name in a tight loop,
 * one connection each (a Caddy config change closes idle keep-alive connections, which a browser
 * would retry: not an outage), every answer kept with when it started and ended.
 */
export interface Visit {
  startMs: number;
  endMs: number;
  isOk: boolean;
  body: string;
}

function visit(port: number, host: string): Promise<Visit> {
  const startMs = performance.now();
  return new Promise((resolve) => {
    const done = (isOk: boolean, body: string) => resolve({ startMs, endMs: performance.now(), isOk, body });
    const request = http.get(
      { host: '127.0.0.1', port, path: '/', headers: { host }, timeout: 5000, agent: false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          done(status >= 200 && status < 300, body.trim());
        });
        response.on('error', () => done(false, ''));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => done(false, ''));
  });
}

export function startVisitor(port: number, host: string) {
  const visits: Visit[] = [];
  let isStopped = false;
  const loop = (async () => {
    while (!isStopped) {
      visits.push(await visit(port, host));
      await sleep(2);
    }
  })();
  return {
    visits,
    /** The body of the last good answer. */
    current: () => visits.findLast((v) => v.isOk)?.body,
    async stop(): Promise<void> {
      isStopped = true;
      await loop;
    },
  };
}

/** Failed answers that started in [from, to]: how many, and from the first's start to the last's end. */
export function failuresBetween(
  visits: Visit[],
  from: number,
  to: number,
): { count: number; total: number; windowMs: number } {
  const inside = visits.filter((v) => v.startMs >= from && v.startMs <= to);
  const failed = inside.filter((v) => !v.isOk);
  const windowMs = failed.length === 0 ? 0 : failed.at(-1)!.endMs - failed[0]!.startMs;
  return { count: failed.length, total: inside.length, windowMs };
}
