import { performance } from 'node:perf_hooks';
import { BENCH } from '../lib/config.js';
import { row, type Row } from '../lib/report.js';
import {
  awaitDeployment,
  createService,
  deleteServices,
  redeployService,
  uniqueServiceName,
  type Api,
} from '../lib/services-api.js';
import { startWorker } from '../lib/stack.js';
import { log, type BenchContext } from './context.js';

/**
 * Part of the release suite (issue 29): a release waiting out its windows holds no worker slot
 * (docs/deployments.md#continuations). One worker process with a single job slot and the release
 * windows; first one redeploy alone, then `SERVICES` redeploys of different services requested
 * at once. Were each release to hold the slot through its windows (at least 4 s of the 2 s + 2 s
 * minimums), the batch would take `SERVICES` times one redeploy (the baseline); with
 * continuations the windows overlap and only the engine work and the looks queue.
 */
const SERVICES = 6;
const compose = `services:
  web:
    image: ${BENCH.image}
    command: ["httpd", "-f", "-p", "8080", "-h", "/"]
    ports: ["8080"]
`;

export async function releaseSlotsPhase(
  ctx: BenchContext,
  windows: Record<string, string>,
  extraEnv: Record<string, string>,
  add: (r: Row) => void,
): Promise<void> {
  const worker = await startWorker(0, { concurrency: 1, extraEnv: { ...extraEnv, ...windows } });
  const api: Api = { url: ctx.apiUrl, authorization: ctx.authorization };
  const created: string[] = [];
  try {
    for (let i = 0; i < SERVICES; i++) {
      const service = await createService(api, ctx.customerIds[0]!, uniqueServiceName(), compose);
      created.push(service.id);
      await succeeded(api, service.deploymentId);
    }
    log('release: one redeploy alone on a one-slot worker');
    const t0 = performance.now();
    await succeeded(api, await redeployService(api, created[0]!));
    const alone = performance.now() - t0;
    log(`release: ${SERVICES} redeploys at once on the same one-slot worker`);
    const t1 = performance.now();
    const requested = await Promise.all(created.map((id) => redeployService(api, id)));
    await Promise.all(requested.map((id) => succeeded(api, id)));
    const together = performance.now() - t1;
    // Holding the slot through its windows, each redeploy would wait for the one before it.
    const held = alone * SERVICES;
    add(
      row({
        section: 'release',
        name: `${SERVICES} redeploys at once on one job slot (start-first, wall time)`,
        baseline: { label: `${SERVICES} × one redeploy alone (the slot held)`, value: held, unit: 'ms' },
        figure: { value: together, unit: 'ms' },
        target: { text: '< 1 (windows overlap)', met: together < held },
        note: `one alone ${Math.round(alone)} ms; the engine work of the ${SERVICES} (create, start, verify, retire) and every look at the evidence still share the one slot`,
      }),
    );
    await deleteServices(api, ctx.pool, created);
    created.length = 0;
  } finally {
    if (created.length > 0)
      await deleteServices(api, ctx.pool, created).catch((error: unknown) =>
        ctx.notes.push(`release slots cleanup: ${String(error)}`),
      );
    await worker.stop();
  }
}

async function succeeded(api: Api, deploymentId: string): Promise<void> {
  const deployment = await awaitDeployment(api, deploymentId, 180);
  if (deployment.status !== 'succeeded')
    throw new Error(`deployment ${deploymentId} ended ${deployment.status}: ${deployment.error ?? ''}`);
}
