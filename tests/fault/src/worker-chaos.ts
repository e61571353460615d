import { isFinalDeployment } from '@hostctl/domain';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '@hostctl/db';
import type { FaultStack } from './fault-stack.js';
import { scrape, sumMetric } from './metrics-scrape.js';

/**
 * SIGKILLs workers at random moments, preferring one that is running a job right now (its
 * /metrics says so), so kills land in every deploy step; the steps of the deployments running at
 * that instant are recorded. A killed worker starts again after a pause, in the background, while
 * the others keep being killed; at least one worker is always up.
 */
export interface Kill {
  worker: string;
  at: number;
  /** Whether the killed worker was running a job. */
  wasBusy: boolean;
  /** Deployments running at the kill, with the step each was in. */
  inFlight: { id: string; step: string | null }[];
  /** Kill → the new process answered /readyz. */
  restartedAfterMs: number;
}

export function startWorkerChaos(stack: FaultStack, db: Db, options: { minGapMs: number; maxGapMs: number }) {
  const kills: Kill[] = [];
  const restarting = new Map<number, Promise<void>>();
  let isStopped = false;
  const loop = (async () => {
    while (!isStopped) {
      await sleep(between(options.minGapMs, options.maxGapMs));
      const up = stack.workers.map((_, index) => index).filter((index) => !restarting.has(index));
      if (isStopped || up.length < 2) continue;
      const busy = await busyWorkers(stack, up);
      const index = pick(busy.length > 0 ? busy : up);
      const worker = stack.workers[index]!;
      const inFlight = await db.deployment.findMany({
        where: { status: 'running' },
        select: { id: true, step: true },
      });
      const at = Date.now();
      await stack.signal(worker, 'SIGKILL');
      const kill: Kill = {
        worker: worker.name,
        at,
        wasBusy: busy.includes(index),
        inFlight,
        restartedAfterMs: 0,
      };
      kills.push(kill);
      restarting.set(
        index,
        (async () => {
          await sleep(between(500, 2500));
          await stack.startWorker(index);
          kill.restartedAfterMs = Date.now() - at;
          restarting.delete(index);
        })(),
      );
    }
  })();
  return {
    kills,
    async stop(): Promise<Kill[]> {
      isStopped = true;
      await loop;
      await Promise.all(restarting.values());
      return kills;
    },
  };
}

async function busyWorkers(stack: FaultStack, candidates: number[]): Promise<number[]> {
  const texts = await scrape(candidates.map((index) => stack.workers[index]!.url));
  return candidates.filter((_, i) => sumMetric([texts[i] ?? ''], 'hostctl_worker_active_jobs') > 0);
}

function pick(items: number[]): number {
  return items[Math.floor(Math.random() * items.length)]!;
}

/**
 * For each kill: milliseconds until every deployment running at that instant had finished (an
 * upper bound of the recovery of the one the killed worker held).
 */
export async function recoveryTimes(db: Db, kills: Kill[]): Promise<number[]> {
  const times: number[] = [];
  for (const kill of kills) {
    if (kill.inFlight.length === 0) continue;
    const rows = await db.deployment.findMany({
      where: { id: { in: kill.inFlight.map((deployment) => deployment.id) } },
      select: { status: true, finishedAt: true },
    });
    if (rows.some((row) => !isFinalDeployment(row.status) || !row.finishedAt)) continue;
    times.push(Math.max(...rows.map((row) => row.finishedAt!.getTime() - kill.at)));
  }
  return times;
}

export function summarise(values: number[]): string {
  if (values.length === 0) return 'n/a';
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return `median ${(at(0.5) / 1000).toFixed(1)} s, max ${(sorted.at(-1)! / 1000).toFixed(1)} s (n=${values.length})`;
}

function between(min: number, max: number): number {
  return min + Math.random() * (max - min);
}
