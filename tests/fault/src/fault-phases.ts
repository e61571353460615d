import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '@hostctl/db';
import type { CaddyAdminDelay } from './caddy-admin-delay.js';
import { CADDY_ADMIN_URL, FAULT_RUNTIME } from './fault-env.js';
import { visit } from './release-sets.js';
import type { FaultReport } from './fault-report.js';
import type { FaultStack } from './fault-stack.js';
import type { PgProxy } from './pg-proxy.js';
import type { RedisServer } from './redis-server.js';
import { waitFinal, type Ledger } from './request-ledger.js';
import { recoveryTimes, startWorkerChaos, summarise } from './worker-chaos.js';
import type { Workloads } from './workloads.js';

/** One fault each; every phase records what it did, measures its recovery and checks its promises. */
export interface PhaseContext {
  stack: FaultStack;
  db: Db;
  workloads: Workloads;
  ledger: Ledger;
  report: FaultReport;
  redis: RedisServer;
  proxy: PgProxy;
  /** Between the workers and Caddy's admin API when routing is configured. */
  caddy?: CaddyAdminDelay;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const pick = <T>(items: T[]): T | undefined => items[Math.floor(Math.random() * items.length)];

async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await probe())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(200);
  }
  return Date.now() - started;
}

const status = async (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(5000) }).then(
    (response) => response.status,
    () => 0,
  );

async function allAnswer(urls: string[], path: string, expected: number): Promise<boolean> {
  return (await Promise.all(urls.map((url) => status(`${url}${path}`)))).every((code) => code === expected);
}

const KILLS_WANTED = 5;

export async function trafficUnderKillsPhase({ stack, db, ledger, report }: PhaseContext): Promise<void> {
  const chaos = startWorkerChaos(stack, db, { minGapMs: 1500, maxGapMs: 4000 });
  const created: string[] = [];
  // 18 rounds of traffic, longer while fewer than KILLS_WANTED workers were killed: a killed worker
  // is only killed again once it is back, and on a loaded machine a start took 31 s (so 18 rounds
  // saw 4 kills). The traffic goes on while the kills happen; the check below still needs them all.
  for (let i = 0; i < 18 || (chaos.kills.length < KILLS_WANTED && i < 60); i++) {
    const id = await ledger.create();
    if (id) created.push(id);
    await sleep(2000);
    const target = pick(created.filter((serviceId) => ledger.live.has(serviceId)));
    if (i >= 2 && target) {
      await ledger.redeploy(target);
      // Twice in a row: the second coalesces into the first while it waits.
      if (i % 3 === 0) await ledger.redeploy(target);
    }
    const doomed = pick(created.slice(0, -2).filter((serviceId) => ledger.live.has(serviceId)));
    if (i >= 5 && i % 2 === 1 && doomed) await ledger.remove(doomed);
  }
  const kills = await chaos.stop();
  const settledIn = Date.now();
  await waitFinal(db, ledger.accepted, 120_000);
  const steps = kills.flatMap((kill) => kill.inFlight.map((deployment) => deployment.step ?? 'claimed'));
  const byStep = Object.entries(
    steps.reduce<Record<string, number>>(
      (counts, step) => ({ ...counts, [step]: (counts[step] ?? 0) + 1 }),
      {},
    ),
  );
  report.note(
    `${ledger.accepted.length} requests accepted; ${kills.length} SIGKILLs, ${kills.filter((kill) => kill.wasBusy).length} of a worker running a job (kill → replacement ready: ${summarise(kills.map((kill) => kill.restartedAfterMs))})`,
  );
  report.note(
    `deployments in flight at the kills, by step: ${byStep.map(([step, n]) => `${step} ${n}`).join(', ') || 'none'}`,
  );
  report.note(
    `kill → every deployment then in flight finished: ${summarise(await recoveryTimes(db, kills))}`,
  );
  report.note(`all requests final ${seconds(Date.now() - settledIn)} after the last kill`);
  report.check(kills.length >= KILLS_WANTED, `only ${kills.length} workers were killed`);
}

// Where a release waits for its containers: the single engine's own checks, or Swarm's update.
const RELEASE_WAIT_STEPS =
  FAULT_RUNTIME === 'swarm' ? ['create', 'stabilize'] : ['create', 'start', 'verify'];

export async function sigtermDrainPhase({ stack, db, ledger, report }: PhaseContext): Promise<void> {
  const first = ledger.accepted.length;
  for (const serviceId of [...ledger.live].slice(0, 3)) await ledger.redeploy(serviceId);
  await until(
    `a deployment reaching ${RELEASE_WAIT_STEPS.join('/')}`,
    async () =>
      (await db.deployment.count({
        where: { status: 'running', step: { in: RELEASE_WAIT_STEPS } },
      })) > 0,
    30_000,
  );
  const index = Math.floor(Math.random() * stack.workers.length);
  const exitedMs = await stack.signal(stack.workers[index]!, 'SIGTERM');
  report.note(
    `SIGTERM: ${stack.workers[index]!.name} drained and exited in ${seconds(exitedMs)} (grace 25 s)`,
  );
  report.check(exitedMs < 31_000, `SIGTERM drain took ${exitedMs} ms`);
  await stack.startWorker(index);
  const finishedIn = (await waitFinal(db, ledger.accepted.slice(first), 60_000)) - Date.now();
  report.note(
    `redeploys in flight at the SIGTERM all final (${seconds(Math.max(0, finishedIn))} after restart)`,
  );
}

export async function redisRestartPhase({ stack, db, ledger, report, redis }: PhaseContext): Promise<void> {
  const first = ledger.accepted.length;
  const someone = [...ledger.live][0];
  await ledger.create();
  await ledger.create();
  if (someone) await ledger.redeploy(someone);
  const apis = stack.apis.map((api) => api.url);
  await redis.restart(4000, async () => {
    await sleep(300);
    const logs = await ledger.probe(`/api/services/${someone ?? 'x'}/logs`);
    report.note(
      `Redis down: GET logs → ${logs.status} in ${logs.ms} ms, Retry-After ${logs.retryAfter ?? 'none'}`,
    );
    report.check(
      logs.status === 503 && logs.retryAfter !== null && logs.ms < 5000,
      'logs during the Redis outage: not a fast 503 with Retry-After',
    );
    const before = ledger.refused.length;
    await ledger.create();
    const refused = ledger.refused.slice(before);
    report.note(
      `Redis down: create → ${refused.length ? `${refused[0]!.status} in ${refused[0]!.ms} ms, Retry-After ${refused[0]!.retryAfter ?? 'none'}` : 'accepted (durable in PostgreSQL)'}`,
    );
    for (const refusal of refused)
      report.check(
        refusal.status === 503 && refusal.retryAfter !== null && refusal.ms < 5000,
        'create during the Redis outage: not a fast 503 with Retry-After',
      );
    report.check(!(await allAnswer(apis, '/readyz', 200)), 'api /readyz said ready without Redis');
  });
  const back = Date.now();
  const settled = await waitFinal(db, ledger.accepted.slice(first), 90_000);
  report.note(
    `Redis restarted empty: requests accepted just before it finished ${seconds(settled - back)} after it returned (jobs lost with Redis are re-enqueued by the reconciler)`,
  );
  const workers = stack.workers.map((worker) => worker.url);
  const readyIn = await until(
    'workers and apis ready and live',
    async () =>
      (await allAnswer(workers, '/livez', 200)) &&
      (await allAnswer(workers, '/readyz', 200)) &&
      (await allAnswer(apis, '/readyz', 200)),
    30_000,
  );
  report.note(`every process ready and live ${seconds(readyIn)} after the checks started`);
  const after = ledger.accepted.length;
  const started = Date.now();
  await ledger.create();
  await waitFinal(db, ledger.accepted.slice(after), 60_000);
  report.note(`a create after the restart ran in ${seconds(Date.now() - started)} (workers consume again)`);
}

export async function postgresCutPhase({ stack, db, ledger, report, proxy }: PhaseContext): Promise<void> {
  const first = ledger.accepted.length;
  await ledger.create();
  const apis = stack.apis.map((api) => api.url);
  proxy.cut();
  const cutAt = Date.now();
  await sleep(300);
  const list = await ledger.probe('/api/services?per_page=1');
  report.note(
    `PostgreSQL cut: GET /api/services → ${list.status} in ${list.ms} ms, Retry-After ${list.retryAfter ?? 'none'}`,
  );
  report.check(
    list.status === 503 && list.retryAfter !== null && list.ms < 5000,
    'list during the PostgreSQL cut: not a fast 503 with Retry-After',
  );
  report.check(!(await allAnswer(apis, '/readyz', 200)), 'api /readyz said ready without PostgreSQL');
  await sleep(Math.max(0, 5000 - (Date.now() - cutAt)));
  proxy.restore();
  const readyIn = await until('apis ready after the cut', () => allAnswer(apis, '/readyz', 200), 30_000);
  report.note(
    `PostgreSQL back after ${seconds(Date.now() - cutAt - readyIn)}: apis ready in ${seconds(readyIn)}`,
  );
  const started = Date.now();
  await ledger.create();
  await waitFinal(db, ledger.accepted.slice(first), 90_000);
  report.note(`requests around the cut final, a create after it ran in ${seconds(Date.now() - started)}`);
}

async function runningServices(db: Db, ledger: Ledger): Promise<string[]> {
  const rows = await db.service.findMany({
    where: { id: { in: [...ledger.live] }, status: 'running' },
    select: { id: true },
  });
  return rows.map((row) => row.id);
}

/** The service runs again: a running unit that is not one of `stale` (units from before a restart). */
async function isRestored(
  db: Db,
  workloads: Workloads,
  serviceId: string,
  stale: ReadonlySet<string> = new Set(),
): Promise<boolean> {
  const service = await db.service.findUnique({ where: { id: serviceId }, select: { status: true } });
  const units = await workloads.units({ serviceId }).catch(() => []);
  return (
    service?.status === 'running' &&
    units.some((unit) => unit.state === 'running' && !unit.standby && !stale.has(unit.id))
  );
}

export async function removedContainerPhase({ db, workloads, ledger, report }: PhaseContext): Promise<void> {
  const serviceId = pick(await runningServices(db, ledger));
  if (!serviceId) return report.fail('no running service to remove a container from');
  const removed = await workloads.removeRunningUnit(serviceId);
  if (!removed) return report.fail(`service ${serviceId} is running but has no running container`);
  const restoredIn = await until(
    'the removed container restored',
    async () => {
      const units = await workloads.units({ serviceId });
      return (
        units.some((unit) => unit.state === 'running' && unit.id !== removed) &&
        (await isRestored(db, workloads, serviceId))
      );
    },
    60_000,
  );
  const by = workloads.runtime === 'swarm' ? 'Swarm or the reconciler' : 'the reconciler';
  report.note(`docker rm -f of a running service's container: recreated by ${by} in ${seconds(restoredIn)}`);
}

export async function dockerRestartPhase({
  stack,
  db,
  workloads,
  ledger,
  report,
}: PhaseContext): Promise<void> {
  const running = await runningServices(db, ledger);
  // Swarm: no live-restore, so every task's container stops with the engine, and the manager may
  // still report the old tasks running for a moment after it returns (seen: "all up 0.1 s after
  // the engine returned"). A restored service runs a new task. The single engine restarts the
  // same containers (same ids), and its own state is current once it answers.
  const stale = new Set(
    workloads.runtime === 'swarm'
      ? (await workloads.units({ instance: stack.env.QUEUE_PREFIX! })).map((unit) => unit.id)
      : [],
  );
  const { downMs } = await workloads.restartEngine(stack.env.QUEUE_PREFIX!);
  report.note(
    `Docker restarted: engine answered again after ${seconds(downMs)}; ${running.length} running services to restore`,
  );
  const started = Date.now();
  const restoredIn = await until(
    'running services restored after the Docker restart',
    async () => {
      for (const serviceId of running) if (!(await isRestored(db, workloads, serviceId, stale))) return false;
      return true;
    },
    120_000,
  ).catch(async (error: Error) => {
    const failed = await db.service.findMany({
      where: { id: { in: running }, status: 'failed' },
      select: { id: true },
    });
    const down: string[] = [];
    for (const serviceId of running)
      if (!(await isRestored(db, workloads, serviceId, stale)))
        down.push(`${serviceId}: ${await workloads.describe(serviceId).catch((e: Error) => e.message)}`);
    throw new Error(
      `${error.message} (${failed.length} marked failed); not restored: ${down.slice(0, 3).join(' | ')}`,
    );
  });
  const byReconciler = await db.serviceEvent.count({
    where: {
      serviceId: { in: running },
      type: 'restart',
      status: 'success',
      message: { startsWith: 'Reconciler restore' },
      createdAt: { gte: new Date(started) },
    },
  });
  report.note(
    `all ${running.length} running services up ${seconds(restoredIn)} after the engine returned (${byReconciler} restored by the reconciler, the others restarted by ${workloads.runtime === 'swarm' ? "Swarm's restart policy" : "Docker's unless-stopped policy"})`,
  );
  report.check(byReconciler > 0, 'no service without a restart policy was restored by the reconciler');
  if (CADDY_ADMIN_URL) {
    // Restored containers and tasks have new addresses (on Swarm, new published ports).
    const rows = await db.service.findMany({ where: { id: { in: running } }, select: { name: true } });
    const hosts = rows.map((row) => `${row.name}.${process.env.APPS_DOMAIN ?? 'apps.localhost'}`);
    const answeredIn = await until(
      'restored services answering through Caddy',
      async () => (await Promise.all(hosts.map(visit))).every(Boolean),
      60_000,
    );
    report.note(
      `all ${hosts.length} answer through Caddy ${seconds(Date.now() - started)} after the engine returned (${seconds(answeredIn)} after they ran)`,
    );
  }
  const workers = stack.workers.map((worker) => worker.url);
  await until('workers ready after the Docker restart', () => allAnswer(workers, '/readyz', 200), 30_000);
  report.note(`workers ready ${seconds(Date.now() - started)} after the engine returned`);
}
