import { performance } from 'node:perf_hooks';
import { BENCH } from '../lib/config.js';
import { hostctlObjects, probeNetworkCapacity, rawCreateStart, rawRemove } from '../lib/docker.js';
import { peakRss, type Proc } from '../lib/proc.js';
import { printRow, row, type Row } from '../lib/report.js';
import { createService, deleteServices, untilFinal, type Api } from '../lib/services-api.js';
import { startWorker } from '../lib/stack.js';
import { log, type BenchContext } from './context.js';

const WORKER_COUNTS = [1, 2, 4] as const;

/**
 * 4. A batch of deploys requested at once (concurrent POSTs) with 1, 2 and 4 worker processes
 * (WORKER_CONCURRENCY = BENCH.scalingConcurrency each, default 1), from the first POST until every deployment is final;
 * against the raw ceiling: the same number of network + create + start done in parallel with
 * dockerode. Every service is deleted through the API afterwards and Docker is checked by label.
 */
export async function workersSuite(ctx: BenchContext): Promise<void> {
  const api: Api = { url: ctx.apiUrl, authorization: ctx.authorization };
  const customerId = ctx.customerIds[1]!;
  const add = (r: Row) => {
    ctx.rows.push(r);
    printRow(r);
  };

  // Each service gets its own bridge network; Docker's default address pools hold ~31 of them.
  const capacity = await probeNetworkCapacity(BENCH.batchSize + 2);
  const batch = Math.min(BENCH.batchSize, capacity - 2);
  if (batch < BENCH.batchSize) {
    ctx.notes.push(
      `worker scaling ran ${batch} deploys instead of ${BENCH.batchSize}: the Docker engine can create only ${capacity} more bridge networks ` +
        '(default address pools) and every service needs one; see docs/performance.md',
    );
  }
  if (batch < 4)
    throw new Error(`only ${capacity} bridge networks can be created: not enough for the worker benchmark`);

  log(`workers: raw baseline, ${batch} parallel network + create + start`);
  const t0 = performance.now();
  const raws = await Promise.allSettled(Array.from({ length: batch }, () => rawCreateStart()));
  const rawSeconds = (performance.now() - t0) / 1000;
  await Promise.all(raws.flatMap((r) => (r.status === 'fulfilled' ? [rawRemove(r.value)] : [])));
  const rawFailed = raws.filter((r) => r.status === 'rejected');
  if (rawFailed.length > 0)
    throw new Error(
      `raw baseline: ${rawFailed.length} of ${batch} failed: ${String((rawFailed[0] as PromiseRejectedResult).reason)}`,
    );
  const rawRate = batch / rawSeconds;

  const rates = new Map<number, number>();
  const perProcess = BENCH.scalingConcurrency;
  for (const count of WORKER_COUNTS) {
    log(`workers: ${batch} deploys with ${count} worker process(es), ${perProcess} job(s) each`);
    const workers: Proc[] = [];
    const ids: string[] = [];
    try {
      for (let i = 0; i < count; i++) workers.push(await startWorker(i, { concurrency: perProcess }));
      const { result, peaks } = await peakRss([ctx.api.pid, ...workers.map((w) => w.pid)], async () => {
        const started = performance.now();
        const createdAll = await Promise.all(
          Array.from({ length: batch }, () => createService(api, customerId)),
        );
        ids.push(...createdAll.map((c) => c.id));
        const outcome = await untilFinal(
          ctx.pool,
          createdAll.map((c) => c.deploymentId),
        );
        return { ...outcome, seconds: (performance.now() - started) / 1000 };
      });
      const rate = result.succeeded / result.seconds;
      rates.set(count, rate);
      add(
        row({
          section: 'workers',
          name: `${batch} deploys at once, ${count} worker process(es) × ${perProcess} job(s)`,
          baseline: { label: 'raw parallel', value: rawRate, unit: 'deploys/s' },
          figure: { value: rate, unit: 'deploys/s' },
          note: `${result.seconds.toFixed(1)} s; ${result.succeeded} succeeded${result.failed ? `, ${result.failed} FAILED (${result.firstError})` : ''}`,
        }),
      );
      if (result.failed > 0)
        ctx.notes.push(`workers ×${count}: ${result.failed} deploys failed: ${result.firstError}`);
      ctx.rows.push(
        row({
          section: 'memory',
          name: `worker RSS peak, batch with ${count} worker(s) (max of them)`,
          baseline: null,
          figure: { value: Math.max(...peaks.slice(1)), unit: 'MiB' },
        }),
        row({
          section: 'memory',
          name: `API RSS peak, batch with ${count} worker(s)`,
          baseline: null,
          figure: { value: peaks[0]!, unit: 'MiB' },
        }),
      );
      log(`workers: deleting ${ids.length} services through the API`);
      await deleteServices(api, ctx.pool, ids);
      ids.length = 0;
      const left = await hostctlObjects();
      const leftover = left.containers + left.networks + left.volumes;
      add(
        row({
          section: 'workers',
          name: `cleanup after ${count} worker(s): hostctl objects left in Docker`,
          baseline: null,
          figure: { value: leftover, unit: '' },
          target: { text: '0', met: leftover === 0 },
          note: `containers ${left.containers}, networks ${left.networks}, volumes ${left.volumes} (label io.hostctl.managed, instance ${BENCH.queuePrefix})`,
        }),
      );
    } finally {
      if (ids.length > 0)
        await deleteServices(api, ctx.pool, ids).catch((error: unknown) =>
          ctx.notes.push(`workers cleanup: ${String(error)}`),
        );
      for (const worker of workers) await worker.stop();
    }
  }
  const one = rates.get(1)!;
  for (const count of [2, 4]) {
    add(
      row({
        section: 'workers',
        name: `scaling ${count} workers vs 1`,
        baseline: { label: '1 worker', value: one, unit: 'deploys/s' },
        figure: { value: rates.get(count)!, unit: 'deploys/s' },
        target: { text: 'ratio ≥ 1.00', met: rates.get(count)! >= one },
      }),
    );
  }
}
