import { BENCH } from '../lib/config.js';
import { median } from '../lib/load.js';
import { printRow, row, type Row } from '../lib/report.js';
import {
  createService,
  customerQuota,
  deleteServices,
  setCustomerQuota,
  timedDeploy,
  untilFinal,
  type Api,
} from '../lib/services-api.js';
import { startWorker } from '../lib/stack.js';
import { log, type BenchContext } from './context.js';

const RATIO_TARGET = 2;

/**
 * Issue 31 item 3 (docs/quotas.md#fair-queues): customer B's single deploy while customer A has
 * `BENCH_FAIRNESS_FLOOD` deploys queued, against B's deploy with the worker idle, same run, same
 * worker (production WORKER_CONCURRENCY and DEPLOY_CUSTOMER_CONCURRENCY unless the environment
 * says otherwise). A's flood is creates of as many services: redeploys of one service join its
 * queued deployment, so only distinct services queue that many deploys.
 */
export async function fairnessSuite(ctx: BenchContext): Promise<void> {
  const api: Api = { url: ctx.apiUrl, authorization: ctx.authorization };
  const [flooder, victim] = [ctx.customerIds[2]!, ctx.customerIds[3]!];
  const created: string[] = [];
  const add = (r: Row) => {
    ctx.rows.push(r);
    printRow(r);
  };
  // The flood must not meet a quota (the default plan caps containers at 100): lifted for A only.
  const quotaBefore = await customerQuota(api, flooder);
  await setCustomerQuota(api, flooder, {
    plan: quotaBefore.plan,
    overrides: { ...quotaBefore.overrides, services: null, containers: null, deploys_per_hour: null },
  });
  const worker = await startWorker(0);
  try {
    log('fairness: warm-up deploy of customer B (not counted)');
    created.push((await timedDeploy(api, victim)).serviceId);

    log(`fairness: ${BENCH.fairnessSamples} deploys of customer B, worker idle`);
    const idle = await victimDeploys(api, victim, created);

    log(`fairness: customer A queues ${BENCH.fairnessFlood} deploys`);
    const floodStarted = Date.now();
    const flood = await queueFlood(api, flooder, created);
    log(`fairness: ${BENCH.fairnessSamples} deploys of customer B behind A's`);
    const queuedAhead: number[] = [];
    const loaded = await victimDeploys(api, victim, created, async () => {
      queuedAhead.push(await queuedOf(ctx, flooder));
    });
    const drained = await untilFinal(
      ctx.pool,
      flood.map((f) => f.deploymentId),
      600_000,
    );
    const floodSeconds = (Date.now() - floodStarted) / 1000;
    if (drained.failed > 0)
      ctx.notes.push(`fairness: ${drained.failed} of customer A's deploys failed: ${drained.firstError}`);
    const [idleMs, loadedMs] = [median(idle.ms), median(loaded.ms)];
    add(
      row({
        section: 'fairness',
        name: `B's single deploy while A has ${BENCH.fairnessFlood} queued (median of ${loaded.ms.length})`,
        baseline: { label: 'B idle', value: idleMs, unit: 'ms' },
        figure: { value: loadedMs, unit: 'ms' },
        target: { text: `ratio ≤ ${RATIO_TARGET.toFixed(2)}`, met: loadedMs / idleMs <= RATIO_TARGET },
        note:
          `medians idle / flood: queued ${median(idle.queued).toFixed(0)} / ${median(loaded.queued).toFixed(0)} ms, ` +
          `worker pipeline ${median(idle.pipeline).toFixed(0)} / ${median(loaded.pipeline).toFixed(0)} ms; ` +
          `each flood sample ${loaded.ms.map((ms) => ms.toFixed(0)).join(', ')} ms; ` +
          `A's deploys still queued as B asked: ${queuedAhead.join(', ')}`,
      }),
    );
    add(
      row({
        section: 'fairness',
        name: `A's ${BENCH.fairnessFlood} deploys, first POST → all final`,
        baseline: null,
        figure: { value: floodSeconds, unit: 's' },
        note: `${drained.succeeded} succeeded, ${drained.failed} failed; A runs at most DEPLOY_CUSTOMER_CONCURRENCY (default 2) at once`,
      }),
    );
    if (queuedAhead.some((n) => n === 0))
      ctx.notes.push(
        'fairness: A had no deploy queued when some of B’s deploys were asked: raise BENCH_FAIRNESS_FLOOD',
      );
    log(`fairness: deleting ${created.length} services`);
    await deleteServices(api, ctx.pool, created);
    created.length = 0;
  } finally {
    if (created.length > 0)
      await deleteServices(api, ctx.pool, created).catch((error: unknown) =>
        ctx.notes.push(`fairness cleanup: ${String(error)}`),
      );
    await worker.stop();
    await setCustomerQuota(api, flooder, quotaBefore);
  }
}

/**
 * A's creates, `FLOOD_LANES` requests in flight at a time (a CI pipeline's parallel jobs): one
 * customer's creates queue on its quota lock each holding a pooled connection, and a burst past
 * the API's pool (10) is answered 503 (docs/security/limits.md#count-caps), not queued.
 */
const FLOOD_LANES = 8;

async function queueFlood(
  api: Api,
  customerId: string,
  created: string[],
): Promise<{ id: string; deploymentId: string }[]> {
  const flood: { id: string; deploymentId: string }[] = [];
  let inFlight = 0;
  const lane = async () => {
    while (flood.length + inFlight < BENCH.fairnessFlood) {
      inFlight++;
      const service = await createService(api, customerId).finally(() => inFlight--);
      created.push(service.id);
      flood.push(service);
    }
  };
  await Promise.all(Array.from({ length: FLOOD_LANES }, lane));
  return flood;
}

interface VictimTimings {
  /** Request → succeeded → running. */
  ms: number[];
  /** Created → claimed by a worker (the wait in the queue). */
  queued: number[];
  /** Claimed → final (the worker's pipeline, which shares the engine and CPU with A's). */
  pipeline: number[];
}

async function victimDeploys(
  api: Api,
  customerId: string,
  created: string[],
  before?: () => Promise<void>,
): Promise<VictimTimings> {
  const timings: VictimTimings = { ms: [], queued: [], pipeline: [] };
  for (let i = 0; i < BENCH.fairnessSamples; i++) {
    await before?.();
    const { ms, serviceId, deployment } = await timedDeploy(api, customerId);
    created.push(serviceId);
    const startedAt = Date.parse(deployment.started_at ?? deployment.created_at);
    timings.ms.push(ms);
    timings.queued.push(startedAt - Date.parse(deployment.created_at));
    timings.pipeline.push(Date.parse(deployment.finished_at ?? deployment.created_at) - startedAt);
  }
  return timings;
}

async function queuedOf(ctx: BenchContext, customerId: string): Promise<number> {
  const { rows } = await ctx.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM deployments d JOIN services s ON s.id = d.service_id
     WHERE s.customer_id = $1 AND d.status = 'queued'`,
    [customerId],
  );
  return rows[0]!.n;
}
