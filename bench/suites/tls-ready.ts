import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH } from '../lib/config.js';
import { median } from '../lib/load.js';
import { row, type Row } from '../lib/report.js';
import { awaitDeployment, createService, uniqueServiceName, type Api } from '../lib/services-api.js';
import { getOnce, issuedCount, WILDCARD, type Answer } from '../lib/tls.js';
import { log, type BenchContext } from './context.js';

/**
 * A new service's URL over HTTPS after its deployment `succeeded` (issue 34): the wildcard is
 * loaded before any deploy, so the expected answer is one request's time, not an ACME order.
 * From the moment the API's long-poll answers `succeeded` (what a client sees), one prober per
 * scheme requests the URL on a new connection each try until it gets the service's answer: over
 * HTTPS a 200 with the wildcard verified against pebble's root; over plain HTTP the route's own
 * answer, which for a new service is the default 308 to HTTPS (a catch-all 404 or a 502 is not).
 */
interface Ready {
  ms: number;
  attempts: number;
}

const TIMEOUT_MS = 30_000;
const RETRY_MS = 5;

async function firstGood(
  t0: number,
  attempt: () => Promise<Answer>,
  isGood: (answer: Answer) => boolean,
  what: string,
): Promise<Ready> {
  let last = 'no answer';
  for (let attempts = 1; ; attempts++) {
    try {
      const answer = await attempt();
      if (isGood(answer)) return { ms: performance.now() - t0, attempts };
      last = `${answer.status} ${answer.location ?? answer.body.slice(0, 60)}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    if (performance.now() - t0 > TIMEOUT_MS)
      throw new Error(`${what} gave no good answer within ${TIMEOUT_MS} ms of succeeded (last: ${last})`);
    await sleep(RETRY_MS);
  }
}

export async function readinessPhase(
  ctx: BenchContext,
  api: Api,
  root: string,
  created: string[],
  add: (r: Row) => void,
): Promise<void> {
  const ordersBefore = await issuedCount(ctx.pool);
  const ready: Record<'http' | 'https', Ready[]> = { http: [], https: [] };
  // One more request of each a moment later: tells "the URL was waited for" from "a request right
  // after a deploy is slow on this machine" when the first good answer took a while.
  const later: Record<'http' | 'https', number[]> = { http: [], https: [] };
  for (let i = 0; i < BENCH.tlsDeploys; i++) {
    log(`tls: new service ${i + 1}/${BENCH.tlsDeploys}, HTTPS readiness after succeeded`);
    const name = uniqueServiceName();
    const host = `${name}.${BENCH.appsDomain}`;
    const service = await createService(api, ctx.customerIds[0]!, name);
    created.push(service.id);
    const deployment = await awaitDeployment(api, service.deploymentId, 180);
    const t0 = performance.now();
    if (deployment.status !== 'succeeded')
      throw new Error(`deployment of ${host} ended ${deployment.status}: ${deployment.error ?? ''}`);
    const redirect = `https://${host}:${BENCH.ports.caddyHttps}/`;
    const [plain, tls] = await Promise.all([
      firstGood(
        t0,
        () => getOnce('http', host, root),
        (a) => a.status === 200 || (a.status === 308 && a.location === redirect),
        `http://${host}`,
      ),
      firstGood(
        t0,
        () => getOnce('https', host, root),
        (a) => a.status === 200 && a.subjectAltName === `DNS:${WILDCARD}`,
        `https://${host}`,
      ),
    ]);
    ready.http.push(plain);
    ready.https.push(tls);
    for (const scheme of ['https', 'http'] as const)
      later[scheme].push((await getOnce(scheme, host, root)).ms);
  }
  const orders = (await issuedCount(ctx.pool)) - ordersBefore;
  const ms = (list: Ready[]) => list.map((r) => r.ms);
  const tries = (list: Ready[]) => Math.max(...list.map((r) => r.attempts));
  add(
    row({
      section: 'tls',
      name: `succeeded → first trusted HTTPS answer (new service, median of ${BENCH.tlsDeploys})`,
      baseline: { label: 'first HTTP answer', value: median(ms(ready.http)), unit: 'ms' },
      figure: { value: median(ms(ready.https)), unit: 'ms' },
      target: { text: 'no ACME order on a deploy', met: orders === 0 },
      note:
        `max HTTPS ${Math.max(...ms(ready.https)).toFixed(1)} ms, HTTP ${Math.max(...ms(ready.http)).toFixed(1)} ms; ` +
        `most tries before a good answer: HTTPS ${tries(ready.https)}, HTTP ${tries(ready.http)}; ` +
        `the same request just after, median: HTTPS ${median(later.https).toFixed(1)} ms, HTTP ${median(later.http).toFixed(1)} ms; ` +
        `wildcard orders during the deploys: ${orders}; HTTP's answer is the default 308 to HTTPS`,
    }),
  );
}
