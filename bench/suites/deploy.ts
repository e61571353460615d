import { BENCH } from '../lib/config.js';
import { rawCreateStart, rawLifecycle, rawRemove } from '../lib/docker.js';
import { median } from '../lib/load.js';
import { peakRss, rssMiB } from '../lib/proc.js';
import { printRow, row, type Row } from '../lib/report.js';
import { deleteServices, timedDeploy, timedLifecycle, type Api } from '../lib/services-api.js';
import { startWorker } from '../lib/stack.js';
import { log, type BenchContext } from './context.js';

const OVERHEAD_TARGET_MS = 300;

/**
 * 3. Control-plane overhead of a deploy: POST /api/services → deployment succeeded (long-poll
 * GET /api/deployments/:id?wait=60) → service running, minus a raw dockerode network + create +
 * start of the same container measured in the same run (alternating, so drift hits both). Then
 * the same for stop, start and restart through the API against raw dockerode calls.
 */
export async function deploySuite(ctx: BenchContext): Promise<void> {
  const worker = await startWorker(0);
  const api: Api = { url: ctx.apiUrl, authorization: ctx.authorization };
  const customerId = ctx.customerIds[0]!;
  const created: string[] = [];
  const add = (r: Row) => {
    ctx.rows.push(r);
    printRow(r);
  };
  try {
    ctx.rows.push(
      row({
        section: 'memory',
        name: 'worker RSS idle',
        baseline: null,
        figure: { value: rssMiB(worker.pid), unit: 'MiB' },
      }),
    );
    log('deploy: warm-up deploy (not counted)');
    created.push((await timedDeploy(api, customerId)).serviceId);
    await rawRemove(await rawCreateStart());

    const deploys: number[] = [];
    const raws: number[] = [];
    const rawNoNetwork: number[] = [];
    const queued: number[] = [];
    const pipeline: number[] = [];
    const tail: number[] = [];
    let lastLog: string[] = [];
    const { peaks } = await peakRss([worker.pid, ctx.api.pid], async () => {
      for (let i = 0; i < BENCH.deployIterations; i++) {
        const runRaw = async () => {
          const raw = await rawCreateStart();
          raws.push(raw.timings.totalMs);
          rawNoNetwork.push(raw.timings.createMs + raw.timings.startMs);
          await rawRemove(raw);
        };
        if (i % 2 === 0) await runRaw();
        const deploy = await timedDeploy(api, customerId);
        if (i % 2 === 1) await runRaw();
        created.push(deploy.serviceId);
        deploys.push(deploy.ms);
        const d = deploy.deployment;
        const createdAt = Date.parse(d.created_at);
        const startedAt = Date.parse(d.started_at ?? d.created_at);
        const finishedAt = Date.parse(d.finished_at ?? d.created_at);
        queued.push(startedAt - createdAt);
        pipeline.push(finishedAt - startedAt);
        tail.push(deploy.ms - (finishedAt - createdAt));
        lastLog = d.logs.map(
          (line) => `+${String(Date.parse(line.timestamp) - startedAt).padStart(4)} ms  ${line.message}`,
        );
      }
    });
    const deployMedian = median(deploys);
    const rawMedian = median(raws);
    const overhead = deployMedian - rawMedian;
    add(
      row({
        section: 'deploy',
        name: `deploy → running (median of ${deploys.length})`,
        baseline: { label: 'raw net+create+start', value: rawMedian, unit: 'ms' },
        figure: { value: deployMedian, unit: 'ms' },
        note: `overhead ${overhead.toFixed(0)} ms; vs raw create+start without network (${median(rawNoNetwork).toFixed(0)} ms): ${(deployMedian - median(rawNoNetwork)).toFixed(0)} ms`,
      }),
    );
    add(
      row({
        section: 'deploy',
        name: 'deploy overhead (median deploy − median raw)',
        baseline: { label: 'raw', value: rawMedian, unit: 'ms' },
        figure: { value: overhead, unit: 'ms' },
        target: { text: `< ${OVERHEAD_TARGET_MS} ms`, met: overhead < OVERHEAD_TARGET_MS },
        note: `API-side split, medians: queued ${median(queued).toFixed(0)} ms, worker pipeline ${median(pipeline).toFixed(0)} ms, finish → HTTP answer + status read ${median(tail).toFixed(0)} ms`,
      }),
    );
    console.log(
      `  deploy log of the last deploy (offsets from the worker's claim):\n    ${lastLog.join('\n    ')}`,
    );

    log('deploy: stop / start / restart');
    const serviceId = created[created.length - 1]!;
    const raw = await rawCreateStart();
    try {
      const timings: Record<'stop' | 'start' | 'restart', { api: number[]; raw: number[] }> = {
        stop: { api: [], raw: [] },
        start: { api: [], raw: [] },
        restart: { api: [], raw: [] },
      };
      for (let i = 0; i < BENCH.lifecycleIterations; i++) {
        for (const action of ['stop', 'start', 'restart'] as const) {
          timings[action].api.push(await timedLifecycle(api, serviceId, action));
          timings[action].raw.push(await rawLifecycle(raw.containerId, action));
        }
      }
      for (const action of ['stop', 'start', 'restart'] as const) {
        const apiMedian = median(timings[action].api);
        const rawMedianAction = median(timings[action].raw);
        add(
          row({
            section: 'deploy',
            name: `${action} overhead (median of ${timings[action].api.length})`,
            baseline: { label: `raw ${action}`, value: rawMedianAction, unit: 'ms' },
            figure: { value: apiMedian - rawMedianAction, unit: 'ms' },
            target: {
              text: `< ${OVERHEAD_TARGET_MS} ms`,
              met: apiMedian - rawMedianAction < OVERHEAD_TARGET_MS,
            },
            note: `API request ${apiMedian.toFixed(0)} ms`,
          }),
        );
      }
    } finally {
      await rawRemove(raw);
    }
    ctx.rows.push(
      row({
        section: 'memory',
        name: 'worker RSS peak during deploys',
        baseline: {
          label: 'idle',
          value: ctx.rows.find((r) => r.name === 'worker RSS idle')!.figure.value,
          unit: 'MiB',
        },
        figure: { value: peaks[0]!, unit: 'MiB' },
      }),
    );
    log(`deploy: deleting ${created.length} services`);
    await deleteServices(api, ctx.pool, created);
    created.length = 0;
  } finally {
    if (created.length > 0)
      await deleteServices(api, ctx.pool, created).catch((error: unknown) =>
        ctx.notes.push(`deploy cleanup: ${String(error)}`),
      );
    await worker.stop();
  }
}
