import { randomUUID } from 'node:crypto';
import { BENCH } from '../lib/config.js';
import { docker, rawRun } from '../lib/docker.js';
import { median } from '../lib/load.js';
import { printRow, row } from '../lib/report.js';
import { deleteServices, timedDeploy, timedRun, type Api } from '../lib/services-api.js';
import { startWorker } from '../lib/stack.js';
import { log, type BenchContext } from './context.js';

/** What a CI pipeline's `hostctl run` of a quick command may add over `docker run` (docs/jobs.md). */
const OVERHEAD_TARGET_MS = 500;
const COMMAND = ['true'];

/**
 * One-off runs (issue 32): `POST /api/services/:id/runs` → `GET /api/runs/:id?wait=60` answering
 * the final status, against a raw dockerode create + start + wait + logs + remove of the same image
 * and command on a bridge network, measured in the same run, alternating so drift hits both. The
 * difference is what the control plane adds: the queue, the run's container shape (the service's
 * network, variables, limits, egress policy), recording the output and the long-poll's answer.
 */
export async function runsSuite(ctx: BenchContext): Promise<void> {
  const worker = await startWorker(0);
  const api: Api = { url: ctx.apiUrl, authorization: ctx.authorization };
  const network = await docker.createNetwork({
    Name: `bench-raw-runs-${randomUUID().slice(0, 8)}`,
    Driver: 'bridge',
    Labels: { [BENCH.rawLabel]: 'true' },
  });
  const created: string[] = [];
  try {
    const service = await timedDeploy(api, ctx.customerIds[0]!);
    created.push(service.serviceId);
    log('runs: warm-up (not counted)');
    await timedRun(api, service.serviceId, COMMAND);
    await rawRun(network.id, COMMAND);

    const runs: number[] = [];
    const inContainer: number[] = [];
    const raws: number[] = [];
    for (let i = 0; i < BENCH.runIterations; i++) {
      if (i % 2 === 0) raws.push((await rawRun(network.id, COMMAND)).ms);
      const run = await timedRun(api, service.serviceId, COMMAND);
      runs.push(run.ms);
      if (run.durationMs !== null) inContainer.push(run.durationMs);
      if (i % 2 === 1) raws.push((await rawRun(network.id, COMMAND)).ms);
    }
    const runMedian = median(runs);
    const rawMedian = median(raws);
    const overhead = runMedian - rawMedian;
    const result = row({
      section: 'runs',
      name: `one-off run of \`true\` → final answer (median of ${runs.length})`,
      baseline: { label: 'raw create+start+wait+remove', value: rawMedian, unit: 'ms' },
      figure: { value: runMedian, unit: 'ms' },
      target: { text: `overhead < ${OVERHEAD_TARGET_MS} ms`, met: overhead < OVERHEAD_TARGET_MS },
      note: `overhead ${overhead.toFixed(0)} ms; the run's own duration_ms (container start → exit) median ${median(inContainer).toFixed(0)} ms`,
    });
    ctx.rows.push(result);
    printRow(result);
  } finally {
    await deleteServices(api, ctx.pool, created).catch((error: unknown) =>
      ctx.notes.push(`runs cleanup: ${String(error)}`),
    );
    await network.remove().catch(() => undefined);
    await worker.stop();
  }
}
