import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { startBenchCaddy } from '../lib/caddy.js';
import { BENCH } from '../lib/config.js';
import { median } from '../lib/load.js';
import { printRow, row, type Row } from '../lib/report.js';
import {
  awaitDeployment,
  createService,
  deleteServices,
  redeployService,
  uniqueServiceName,
  type Api,
} from '../lib/services-api.js';
import { startWorker } from '../lib/stack.js';
import { failuresBetween, startVisitor } from '../lib/visitors.js';
import { log, type BenchContext } from './context.js';
import { releaseSlotsPhase } from './release-slots.js';

/**
 * 5. Releases (issue 14): two copies of one stateless service behind the suite's own Caddy, one
 * redeployed start-first (the default), the other stop-first (forced by
 * `deploy.update_config.order: stop-first`), while a visitor requests each in a tight loop.
 * First the stop-first one alone with RELEASE_STABILIZATION_MS and RELEASE_DRAIN_MS at 0: the
 * redeploy as it was before issue 14 (stop, create, start, verify, route), the baseline. Then a
 * worker with the release windows redeploys both, alternating. Figures: failed requests and their
 * window per redeploy (target: none), and the time from the redeploy request to succeeded and to
 * the new release answering, against that baseline; the stop-first service with the windows is
 * reported too.
 */
const order = (kind: Kind) =>
  kind === 'stop-first' ? '    deploy:\n      update_config:\n        order: stop-first\n' : '';
// Each container answers with its own hostname (its id): a new release is visible at once.
const compose = (kind: Kind) => `services:
  web:
    image: ${BENCH.image}
    command: ["sh", "-c", "mkdir -p /tmp/w && hostname > /tmp/w/index.html && exec httpd -f -p 8080 -h /tmp/w"]
    ports: ["8080"]
${order(kind)}`;

type Kind = 'start-first' | 'stop-first';
// Passed to the worker when set; otherwise the production defaults apply (and are reported).
const windows = {
  RELEASE_STABILIZATION_MS: process.env.BENCH_RELEASE_STABILIZATION_MS ?? '10000',
  RELEASE_STABILIZATION_MIN_MS: process.env.BENCH_RELEASE_STABILIZATION_MIN_MS ?? '2000',
  RELEASE_DRAIN_MS: process.env.BENCH_RELEASE_DRAIN_MS ?? '10000',
  RELEASE_DRAIN_MIN_MS: process.env.BENCH_RELEASE_DRAIN_MIN_MS ?? '2000',
};
const NO_WINDOWS = {
  RELEASE_STABILIZATION_MS: '0',
  RELEASE_STABILIZATION_MIN_MS: '0',
  RELEASE_DRAIN_MS: '0',
  RELEASE_DRAIN_MIN_MS: '0',
};

interface Measure {
  succeededMs: number[];
  servingMs: number[];
  failed: number[];
  requests: number[];
  windowMs: number[];
}
const emptyMeasure = (): Measure => ({
  succeededMs: [],
  servingMs: [],
  failed: [],
  requests: [],
  windowMs: [],
});
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** One redeploy under the visitor's traffic, recorded into `measure`. */
async function timedRedeploy(
  api: Api,
  service: { id: string; kind: Kind },
  visitor: ReturnType<typeof startVisitor>,
  measure: Measure,
): Promise<void> {
  const before = visitor.current();
  const t0 = performance.now();
  const deployment = await awaitDeployment(api, await redeployService(api, service.id), 180);
  const t1 = performance.now();
  if (deployment.status !== 'succeeded')
    throw new Error(`${service.kind} redeploy ended ${deployment.status}: ${deployment.error ?? ''}`);
  if (deployment.update_order && deployment.update_order !== service.kind)
    throw new Error(`the ${service.kind} service was redeployed ${deployment.update_order}`);
  // The visitor keeps going a little: a late failure (e.g. the old set removed too early) counts.
  await sleep(1000);
  const switched = visitor.visits.find((v) => v.startMs >= t0 && v.isOk && v.body !== before);
  const failures = failuresBetween(visitor.visits, t0, performance.now());
  measure.succeededMs.push(t1 - t0);
  measure.servingMs.push(switched ? switched.endMs - t0 : NaN);
  measure.failed.push(failures.count);
  measure.requests.push(failures.total);
  measure.windowMs.push(failures.windowMs);
}

export async function releaseSuite(ctx: BenchContext): Promise<void> {
  const caddy = await startBenchCaddy();
  const workerEnv = (release: Record<string, string>) => ({
    extraEnv: { CADDY_ADMIN_URL: caddy.adminUrl, ...release },
  });
  let worker = await startWorker(0, workerEnv(NO_WINDOWS));
  const api: Api = { url: ctx.apiUrl, authorization: ctx.authorization };
  const created: string[] = [];
  const add = (r: Row) => {
    ctx.rows.push(r);
    printRow(r);
  };
  try {
    const kinds = ['start-first', 'stop-first'] as const;
    const services = new Map<Kind, { id: string; kind: Kind; host: string }>();
    for (const kind of kinds) {
      const name = uniqueServiceName();
      const service = await createService(api, ctx.customerIds[0]!, name, compose(kind));
      created.push(service.id);
      const deployment = await awaitDeployment(api, service.deploymentId, 180);
      if (deployment.status !== 'succeeded')
        throw new Error(`${kind} service: ${deployment.error ?? deployment.status}`);
      services.set(kind, { id: service.id, kind, host: `${name}.apps.localhost` });
    }
    const visitors = new Map(
      kinds.map((kind) => [kind, startVisitor(caddy.httpPort, services.get(kind)!.host)]),
    );
    const before = emptyMeasure();
    const measures = new Map<Kind, Measure>(kinds.map((kind) => [kind, emptyMeasure()]));
    const n = BENCH.releaseIterations;
    try {
      // Both visitors answered by their first release before anything is measured.
      for (const visitor of visitors.values()) while (!visitor.current()) await sleep(50);
      for (let i = 0; i < n; i++) {
        log(`release: redeploy ${i + 1}/${n}, stop-first without release windows (as before issue 14)`);
        await timedRedeploy(api, services.get('stop-first')!, visitors.get('stop-first')!, before);
      }
      await worker.stop();
      worker = await startWorker(0, workerEnv(windows));
      for (let i = 0; i < n; i++) {
        for (const kind of i % 2 === 0 ? kinds : [...kinds].reverse()) {
          log(`release: redeploy ${i + 1}/${n}, ${kind}`);
          await timedRedeploy(api, services.get(kind)!, visitors.get(kind)!, measures.get(kind)!);
        }
      }
    } finally {
      for (const visitor of visitors.values()) await visitor.stop();
    }
    const start = measures.get('start-first')!;
    const stop = measures.get('stop-first')!;
    const baseline = 'stop-first, no windows';
    add(
      row({
        section: 'release',
        name: `failed requests during ${n} redeploys (start-first)`,
        baseline: { label: baseline, value: sum(before.failed), unit: '' },
        figure: { value: sum(start.failed), unit: '' },
        target: { text: 'none', met: sum(start.failed) === 0 },
        note: `of ${sum(start.requests)} requests; baseline ${before.failed.join('/')} of ${sum(before.requests)}`,
      }),
    );
    add(
      row({
        section: 'release',
        name: 'failure window per redeploy (start-first, max)',
        baseline: { label: `${baseline} median`, value: median(before.windowMs), unit: 'ms' },
        figure: { value: Math.max(...start.windowMs), unit: 'ms' },
        target: { text: 'none', met: Math.max(...start.windowMs) === 0 },
        note: `baseline windows ${before.windowMs.map((ms) => ms.toFixed(0)).join('/')} ms`,
      }),
    );
    // The windows end on evidence (docs/deployments.md#release-windows): at least the minimums.
    const configured = Number(windows.RELEASE_STABILIZATION_MIN_MS) + Number(windows.RELEASE_DRAIN_MIN_MS);
    const longest = Number(windows.RELEASE_STABILIZATION_MS) + Number(windows.RELEASE_DRAIN_MS);
    const added = median(start.succeededMs) - median(before.succeededMs);
    add(
      row({
        section: 'release',
        name: `redeploy → succeeded (start-first, median of ${n})`,
        baseline: { label: baseline, value: median(before.succeededMs), unit: 'ms' },
        figure: { value: median(start.succeededMs), unit: 'ms' },
        note: `start-first adds ${added.toFixed(0)} ms: stabilisation + drain windows of at least ${configured} ms (at most ${longest} ms; they end on evidence) and ${(added - configured).toFixed(0)} ms besides`,
      }),
    );
    add(
      row({
        section: 'release',
        name: `redeploy → new release answering (start-first, median of ${n})`,
        baseline: { label: baseline, value: median(before.servingMs), unit: 'ms' },
        figure: { value: median(start.servingMs), unit: 'ms' },
        note: `the stabilisation window (${windows.RELEASE_STABILIZATION_MIN_MS}–${windows.RELEASE_STABILIZATION_MS} ms) is in it; the drain and retire are not`,
      }),
    );
    add(
      row({
        section: 'release',
        name: `failed requests, stop-first with the release windows (${n} redeploys)`,
        baseline: { label: baseline, value: sum(before.failed), unit: '' },
        figure: { value: sum(stop.failed), unit: '' },
        note: `of ${sum(stop.requests)}; windows ${stop.windowMs.map((ms) => ms.toFixed(0)).join('/')} ms; redeploy → succeeded median ${median(stop.succeededMs).toFixed(0)} ms, → new release answering ${median(stop.servingMs).toFixed(0)} ms`,
      }),
    );
    log(`release: deleting ${created.length} services`);
    await deleteServices(api, ctx.pool, created);
    created.length = 0;
    await worker.stop();
    await releaseSlotsPhase(ctx, windows, workerEnv({}).extraEnv, add);
  } finally {
    if (created.length > 0)
      await deleteServices(api, ctx.pool, created).catch((error: unknown) =>
        ctx.notes.push(`release cleanup: ${String(error)}`),
      );
    await worker.stop();
    await caddy.proc.stop();
  }
}
