import { performance } from 'node:perf_hooks';
import { startBenchCaddy, type BenchCaddy } from '../lib/caddy.js';
import { BENCH } from '../lib/config.js';
import { measure, median, medianResult, type LoadResult } from '../lib/load.js';
import type { Proc } from '../lib/proc.js';
import { printRow, row, type Row } from '../lib/report.js';
import {
  awaitDeployment,
  createService,
  deleteServices,
  uniqueServiceName,
  updateService,
  type Api,
} from '../lib/services-api.js';
import { startWorker } from '../lib/stack.js';
import {
  awaitWildcard,
  dropWildcard,
  getOnce,
  issuedCount,
  pebbleRoot,
  tlsWorkerEnv,
  WILDCARD,
} from '../lib/tls.js';
import { log, type BenchContext } from './context.js';
import { readinessPhase } from './tls-ready.js';

/**
 * 7. HTTPS (issue 34), on the suite's own Caddy with a bench worker that orders the wildcard from
 * the stack's pebble (DNS-01 on its PowerDNS) as production does. First the cost of TLS on one
 * route: the same autocannon load over http:// and https:// (keep-alive, interleaved rounds,
 * medians), and a new visitor's first request (a new connection, the HTTPS one with a full
 * handshake verified against pebble's root). Then tls-ready.ts: how long after `succeeded` a new
 * service's URL answers HTTPS.
 */
const BODY = 'hello from the tls bench';
// A Node server: it keeps Caddy's upstream connections alive, so neither scheme waits on a dial.
const UPSTREAM_COMPOSE = `services:
  web:
    image: ${BENCH.nodeImage}
    command: ["node", "-e", "require('http').createServer((req, res) => res.end('${BODY}')).listen(8080)"]
    ports: ["8080"]
`;
const NEW_CONNECTIONS = 100;

export async function tlsSuite(ctx: BenchContext): Promise<void> {
  const api: Api = { url: ctx.apiUrl, authorization: ctx.authorization };
  const created: string[] = [];
  const add = (r: Row) => {
    ctx.rows.push(r);
    printRow(r);
  };
  const caddy = await startBenchCaddy();
  let worker: Proc | undefined;
  try {
    // Ordered in this run: a row left by an earlier one was signed by a root pebble has forgotten.
    await dropWildcard(ctx.pool);
    const root = await pebbleRoot();
    log('tls: starting a worker with ACME on; it orders the wildcard at its start');
    const t0 = performance.now();
    worker = await startWorker(0, { extraEnv: tlsWorkerEnv(caddy.adminUrl) });
    await awaitWildcard(ctx.pool, root);
    add(
      row({
        section: 'tls',
        name: 'worker start → wildcard served (once per installation and renewal)',
        baseline: null,
        figure: { value: performance.now() - t0, unit: 'ms' },
        note: `orders: ${await issuedCount(ctx.pool)}; the worker's own start is in it; never on a deploy's path`,
      }),
    );
    await throughputPhase(ctx, api, caddy, root, created, add);
    await readinessPhase(ctx, api, root, created, add);
    log(`tls: deleting ${created.length} services`);
    await deleteServices(api, ctx.pool, created);
    created.length = 0;
  } finally {
    if (created.length > 0)
      await deleteServices(api, ctx.pool, created).catch((error: unknown) =>
        ctx.notes.push(`tls cleanup: ${String(error)}`),
      );
    await worker?.stop();
    await caddy.proc.stop();
    await dropWildcard(ctx.pool);
  }
}

/** One upstream, its route installed by the worker, loaded over both schemes. */
async function throughputPhase(
  ctx: BenchContext,
  api: Api,
  caddy: BenchCaddy,
  root: string,
  created: string[],
  add: (r: Row) => void,
): Promise<void> {
  const name = uniqueServiceName();
  const host = `${name}.${BENCH.appsDomain}`;
  log(`tls: deploying the upstream ${host}, then opting it out of the HTTP → HTTPS redirect`);
  const service = await createService(api, ctx.customerIds[0]!, name, UPSTREAM_COMPOSE);
  created.push(service.id);
  for (const deploymentId of [
    service.deploymentId,
    // Same route for both schemes: with the default redirect plain HTTP would only answer 308.
    await updateService(api, service.id, { https: { redirect: false } }),
  ]) {
    const deployment = await awaitDeployment(api, deploymentId, 180);
    if (deployment.status !== 'succeeded')
      throw new Error(`upstream deployment ${deployment.status}: ${deployment.error ?? ''}`);
  }
  for (const scheme of ['http', 'https'] as const) {
    const answer = await getOnce(scheme, host, root);
    if (answer.status !== 200 || answer.body !== BODY)
      throw new Error(`${scheme}://${host} answered ${answer.status} ${answer.body.slice(0, 100)}`);
    if (scheme === 'https' && answer.subjectAltName !== `DNS:${WILDCARD}`)
      throw new Error(`https://${host} served ${answer.subjectAltName ?? 'no names'}, not ${WILDCARD}`);
  }

  // autocannon never verifies a certificate: the trusted requests above and below stand for it.
  const targets = {
    http: { url: `http://127.0.0.1:${caddy.httpPort}/`, headers: { host } },
    https: {
      url: `https://127.0.0.1:${BENCH.ports.caddyHttps}/`,
      headers: { host },
      servername: host,
    },
  };
  for (const connections of [10, 50]) {
    const runs: Record<'http' | 'https', LoadResult[]> = { http: [], https: [] };
    for (let round = 1; round <= BENCH.rounds; round++) {
      log(`tls: ${connections} connections, round ${round} of ${BENCH.rounds}`);
      // Alternating which goes first, so drift on the shared machine hits both.
      const order = round % 2 === 1 ? (['http', 'https'] as const) : (['https', 'http'] as const);
      for (const scheme of order) {
        runs[scheme].push(
          await measure({
            ...targets[scheme],
            connections,
            durationS: BENCH.durationS,
            pid: caddy.proc.pid,
          }),
        );
      }
    }
    const plain = medianResult(runs.http);
    const tls = medianResult(runs.https);
    add(
      row({
        section: 'tls',
        name: `HTTPS req/s @${connections}c (keep-alive, median of ${BENCH.rounds})`,
        baseline: { label: 'HTTP', value: plain.rps, unit: 'req/s' },
        figure: { value: tls.rps, unit: 'req/s' },
        note: "autocannon's own TLS runs in the bench's one Node thread: part of the drop is the client's",
      }),
    );
    // The server's side alone, and less sensitive to other work on the machine than req/s.
    if (plain.cpuMsPerRequest !== null && tls.cpuMsPerRequest !== null)
      add(
        row({
          section: 'tls',
          name: `Caddy CPU per request @${connections}c`,
          baseline: { label: 'HTTP', value: plain.cpuMsPerRequest, unit: 'ms' },
          figure: { value: tls.cpuMsPerRequest, unit: 'ms' },
          note: '/proc/<pid>/stat of the Caddy process over the measured runs (10 ms ticks)',
        }),
      );
    add(
      row({
        section: 'tls',
        name: `HTTPS p99 @${connections}c`,
        baseline: { label: 'HTTP', value: plain.p99Ms, unit: 'ms' },
        figure: { value: tls.p99Ms, unit: 'ms' },
        note: `p50 HTTPS ${tls.p50Ms.toFixed(1)} ms, HTTP ${plain.p50Ms.toFixed(1)} ms`,
      }),
    );
  }

  log(`tls: ${NEW_CONNECTIONS} first requests on new connections per scheme, alternating`);
  const firsts: Record<'http' | 'https', number[]> = { http: [], https: [] };
  const protocols = new Set<string>();
  for (let i = 0; i < NEW_CONNECTIONS + 10; i++) {
    for (const scheme of ['http', 'https'] as const) {
      const answer = await getOnce(scheme, host, root);
      if (answer.status !== 200) throw new Error(`${scheme}://${host} answered ${answer.status}`);
      if (answer.protocol) protocols.add(answer.protocol);
      // The first 10 of each warm up (JIT, Caddy's session state).
      if (i >= 10) firsts[scheme].push(answer.ms);
    }
  }
  const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)]!;
  add(
    row({
      section: 'tls',
      name: `first request on a new connection (median of ${NEW_CONNECTIONS})`,
      baseline: { label: 'HTTP', value: median(firsts.http), unit: 'ms' },
      figure: { value: median(firsts.https), unit: 'ms' },
      note: `a full ${[...protocols].join('/')} handshake each, certificate verified against pebble's root; p90 HTTPS ${p90(firsts.https).toFixed(1)} ms, HTTP ${p90(firsts.http).toFixed(1)} ms`,
    }),
  );
}
