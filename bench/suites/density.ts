import { setTimeout as sleep } from 'node:timers/promises';
import { BENCH } from '../lib/config.js';
import {
  growTo,
  logLatencies,
  meanReconcilerSweep,
  percentile,
  periodicSweeps,
  scrape,
} from '../lib/density.js';
import { cpuMs, measure } from '../lib/load.js';
import { rssMiB } from '../lib/proc.js';
import { printRow, row, type Row } from '../lib/report.js';
import { deleteServices, type Api } from '../lib/services-api.js';
import { startWorker } from '../lib/stack.js';
import { log, type BenchContext } from './context.js';

/** What one service count costs the control plane (each figure is compared across counts). */
interface AtCount {
  services: number;
  listP99: number;
  detailP99: number;
  workerCpuMsPerS: number;
  apiCpuMsPerS: number;
  workerRss: number;
  apiRss: number;
  logP50: number;
  logP99: number;
  reconcilerSweepS: number;
  sweeps: Map<string, { last: number; interval: number }>;
}

/**
 * 500 services on one host (issue 29 item 3): the same figures with BENCH_DENSITY_BASE (10) and
 * BENCH_DENSITY (500) services deployed and running — list and detail p99, the worker's and the
 * API's CPU per second of idle time, their RSS, each periodic sweep against its interval, the
 * reconciler's sweep, and log line → live socket latency — each row the large count against the
 * small one in the same run, so whatever grows with the services shows as a ratio above 1.
 */
export async function densitySuite(ctx: BenchContext): Promise<void> {
  const worker = await startWorker(0, { concurrency: 4 });
  const metricsUrl = `http://127.0.0.1:${BENCH.ports.workerHealth}/metrics`;
  const api: Api = { url: ctx.apiUrl, authorization: ctx.authorization };
  const ids: string[] = [];
  const add = (r: Row) => {
    ctx.rows.push(r);
    printRow(r);
  };

  const atCount = async (services: number): Promise<AtCount> => {
    const startedAt = Date.now();
    log(`density: deploying up to ${services} services`);
    await growTo(api, ctx.customerIds, ids, services);
    log(
      `density: ${services} services running after ${((Date.now() - startedAt) / 1000).toFixed(0)} s; idle window`,
    );
    // Idle: no request to the API, every periodic task sweeping at this size at least once (the
    // longest interval is the resource sampler's 30 s).
    const before = await scrape(metricsUrl);
    const cpuBefore = { worker: cpuMs(worker.pid), api: cpuMs(ctx.api.pid), at: Date.now() };
    await sleep(BENCH.densityIdleS * 1000);
    const seconds = (Date.now() - cpuBefore.at) / 1000;
    const workerCpuMsPerS = (cpuMs(worker.pid) - cpuBefore.worker) / seconds;
    const apiCpuMsPerS = (cpuMs(ctx.api.pid) - cpuBefore.api) / seconds;
    const after = await scrape(metricsUrl);

    const headers = { authorization: ctx.authorization };
    const load = { connections: 10, durationS: BENCH.durationS, headers };
    const list = await measure({ ...load, url: `${ctx.apiUrl}/api/services` });
    const detail = await measure({ ...load, url: `${ctx.apiUrl}/api/services/${ids[ids.length - 1]!}` });
    const latencies = await logLatencies(api, ids[0]!, BENCH.densityLogSamples);
    return {
      services,
      listP99: list.p99Ms,
      detailP99: detail.p99Ms,
      workerCpuMsPerS,
      apiCpuMsPerS,
      workerRss: rssMiB(worker.pid),
      apiRss: rssMiB(ctx.api.pid),
      logP50: percentile(latencies, 50),
      logP99: percentile(latencies, 99),
      reconcilerSweepS: meanReconcilerSweep(before, after),
      sweeps: periodicSweeps(after),
    };
  };

  try {
    const small = await atCount(BENCH.densityBase);
    const large = await atCount(BENCH.densityServices);
    const label = `${small.services} services`;
    const compare = (name: string, unit: string, read: (at: AtCount) => number, note?: string) =>
      add(
        row({
          section: 'density',
          name: `${name} @${large.services} services`,
          baseline: { label, value: read(small), unit },
          figure: { value: read(large), unit },
          ...(note ? { note } : {}),
        }),
      );
    compare('GET /api/services p99', 'ms', (at) => at.listP99);
    compare('GET /api/services/:id p99', 'ms', (at) => at.detailP99);
    compare('worker CPU per idle second', 'ms', (at) => at.workerCpuMsPerS);
    compare('API CPU per idle second', 'ms', (at) => at.apiCpuMsPerS);
    compare('worker RSS', 'MiB', (at) => at.workerRss);
    compare('API RSS', 'MiB', (at) => at.apiRss);
    compare('API + worker RSS', 'MiB', (at) => at.apiRss + at.workerRss, 'budget ≤ 450 MiB at 500 services');
    compare('log line → live socket p50', 'ms', (at) => at.logP50);
    compare('log line → live socket p99', 'ms', (at) => at.logP99);
    compare('reconciler sweep (mean)', 's', (at) => at.reconcilerSweepS);
    for (const [task, sweep] of large.sweeps) {
      const before = small.sweeps.get(task);
      add(
        row({
          section: 'density',
          name: `${task} sweep @${large.services} services`,
          baseline: before ? { label, value: before.last, unit: 's' } : null,
          figure: { value: sweep.last, unit: 's' },
          note: `interval ${sweep.interval} s; ${((100 * sweep.last) / sweep.interval).toFixed(1)} % of it`,
        }),
      );
    }
  } finally {
    log(`density: deleting ${ids.length} services`);
    await deleteServices(api, ctx.pool, ids, 1_800_000);
    await worker.stop();
  }
}
