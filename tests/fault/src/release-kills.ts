import { setTimeout as sleep } from 'node:timers/promises';
import { isFinalDeployment } from '@hostctl/domain';
import { FAULT_RUNTIME } from './fault-env.js';
import type { PhaseContext } from './fault-phases.js';
import type { FaultStack } from './fault-stack.js';
import { scrape, sumMetric } from './metrics-scrape.js';
import { visitorTraffic, watchServiceSets } from './release-sets.js';
import { waitFinal } from './request-ledger.js';
import { setsOf } from './workloads.js';

/**
 * Issue 14's fault proof: SIGKILL the worker running a start-first cutover at each of its steps,
 * start it again, and check all along that the service never has more than two container sets,
 * never none running (it had a healthy release all along), and ends with exactly one: the current
 * release's. One deployment is killed at several steps in turn (each kill is a stall, BullMQ fails
 * a job after 5), so a retried job resuming from its checkpoint is killed again at the next step.
 */
// On Swarm the worker writes the specs and waits for Swarm's verdict (`stabilize`), then routes;
// `create` is only the checkpoint written just before `stabilize`, with nothing between them for a
// kill to land in (apps/worker/src/release/swarm-release.ts).
const CUTOVER_STEPS =
  FAULT_RUNTIME === 'swarm'
    ? ['stabilize', 'route']
    : ['create', 'start', 'verify', 'stabilize', 'route', 'drain', 'retire'];
// Every step the engine records, in order, to tell "past the target" from "not there yet".
const ALL_STEPS = [
  'source',
  'build',
  'validate',
  'pull',
  'network',
  'volumes',
  'stop_previous',
  ...CUTOVER_STEPS,
];
const KILLS_PER_DEPLOYMENT = 4;

// Stateless (start-first): a dependency the web component waits for stretches `start`, and the
// web component's late port stretches `verify`.
const CUTOVER_COMPOSE = [
  'services:',
  '  cache:',
  '    image: local/busybox:1',
  '    command: ["sh", "-c", "exec httpd -f -p 9000 -h /www"]',
  '    healthcheck:',
  '      test: ["CMD-SHELL", "wget -qO /dev/null http://127.0.0.1:9000/"]',
  '      interval: 1s',
  '      retries: 3',
  '  web:',
  '    image: local/busybox:1',
  '    command: ["sh", "-c", "sleep 1; exec httpd -f -p 8080 -h /www"]',
  '    ports: ["8080"]',
  '    depends_on: [cache]',
  '',
].join('\n');

export async function releaseCutoverKillsPhase(ctx: PhaseContext): Promise<void> {
  const { stack, db, workloads, ledger, report } = ctx;
  const first = ledger.accepted.length;
  const serviceId = await ledger.create(CUTOVER_COMPOSE);
  if (!serviceId) return report.fail('the cutover service was not accepted');
  await waitFinal(db, ledger.accepted.slice(first), 90_000);
  const service = await db.service.findUniqueOrThrow({
    where: { id: serviceId },
    select: { name: true, status: true },
  });
  if (service.status !== 'running')
    return report.fail(`the cutover service is ${service.status} before any kill`);

  // Route writes held 1 s: the route step lasts long enough for a kill to land in it.
  ctx.caddy?.holdWrites(1000);
  const sets = watchServiceSets(workloads, serviceId);
  const traffic = ctx.caddy
    ? visitorTraffic(`${service.name}.${process.env.APPS_DOMAIN ?? 'apps.localhost'}`)
    : undefined;
  const landed: string[] = [];
  const outcomes: string[] = [];
  // Killed workers start again in the background: a start takes 10-20 s on a loaded machine, and
  // the step after the kill must be watched meanwhile (another worker resumes the job).
  const restarts = new WorkerRestarts(stack);
  try {
    for (let round = 0; round < 3; round++) {
      const remaining = CUTOVER_STEPS.filter((step) => !landed.includes(step)).slice(0, KILLS_PER_DEPLOYMENT);
      if (remaining.length === 0) break;
      const before = ledger.accepted.length;
      await ledger.redeploy(serviceId);
      const deploymentId = ledger.accepted.at(-1)?.deploymentId;
      if (ledger.accepted.length === before || !deploymentId) {
        report.fail('a redeploy of the cutover service was refused');
        break;
      }
      for (const target of remaining) {
        const reached = await reachStep(ctx, deploymentId, target);
        if (!reached) continue;
        const step = await killJobHolders(stack, ctx, deploymentId, restarts);
        if (step && !landed.includes(step)) landed.push(step);
      }
      await waitFinal(db, ledger.accepted.slice(before), 120_000);
      const outcome = await db.deployment.findUniqueOrThrow({
        where: { id: deploymentId },
        select: { status: true, error: true },
      });
      outcomes.push(`${outcome.status}${outcome.error ? ` (${outcome.error.slice(0, 120)})` : ''}`);
      report.check(
        isFinalDeployment(outcome.status),
        `cutover deployment ${deploymentId} is ${outcome.status}`,
      );
      await checkOneCurrentSet(ctx, serviceId);
    }
  } finally {
    await restarts.settled();
    ctx.caddy?.holdWrites(0);
    const watch = await sets.stop();
    const visits = await traffic?.stop();
    report.note(
      `cutover kills landed in: ${landed.join(', ') || 'none'}; deployments ended ${outcomes.join(', ')}`,
    );
    report.note(
      `cutover sets: ${watch.samples} samples, at most ${watch.maxSets} set(s), ${watch.zeroRunning} sample(s) with no running set` +
        (visits ? `; visitors through Caddy: ${visits.ok} answered 2xx, ${visits.failed} not` : ''),
    );
    report.check(watch.maxSets <= 2, `more than two sets during a cutover: ${watch.violations.join('; ')}`);
    report.check(
      watch.zeroRunning === 0,
      `no running set while a release existed: ${watch.violations.join('; ')}`,
    );
  }
  const missed = CUTOVER_STEPS.filter((step) => !landed.includes(step));
  report.check(missed.length === 0, `no kill landed in cutover step(s) ${missed.join(', ')}`);
  const after = await db.service.findUniqueOrThrow({ where: { id: serviceId }, select: { status: true } });
  report.check(after.status === 'running', `the cutover service ended ${after.status}`);
}

/** Polls the deployment's step until it is `target` (true) or past it / final (false). */
async function reachStep(ctx: PhaseContext, deploymentId: string, target: string): Promise<boolean> {
  const targetIndex = ALL_STEPS.indexOf(target);
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; await sleep(5)) {
    const row = await ctx.db.deployment.findUnique({
      where: { id: deploymentId },
      select: { status: true, step: true },
    });
    if (!row || isFinalDeployment(row.status)) return false;
    if (row.step === target) return true;
    if (row.step && ALL_STEPS.indexOf(row.step) > targetIndex) return false;
  }
  ctx.report.fail(`deployment ${deploymentId} did not reach ${target} within 90 s`);
  return false;
}

/**
 * Restarts of killed workers, in the background. A worker still starting may already consume jobs
 * (it holds the resumed one) and be killed again: that kill supersedes its start, whose "exited
 * before it was ready" is then expected, not a failure; any other failed start is.
 */
class WorkerRestarts {
  private readonly latest = new Map<number, { superseded: boolean }>();
  private readonly all: Promise<void>[] = [];
  constructor(private readonly stack: FaultStack) {}

  restart(index: number): void {
    const previous = this.latest.get(index);
    if (previous) previous.superseded = true;
    const attempt = { superseded: false };
    this.latest.set(index, attempt);
    this.all.push(
      this.stack.startWorker(index).catch((error: unknown) => {
        if (!attempt.superseded) throw error;
      }),
    );
  }

  async settled(): Promise<void> {
    await Promise.all(this.all);
  }
}

/**
 * SIGKILLs the workers running a job (every live one when none says so), starts them again in the
 * background, and returns the step the deployment was in when they died (null: nothing was killed).
 */
async function killJobHolders(
  stack: FaultStack,
  ctx: PhaseContext,
  deploymentId: string,
  restarts: WorkerRestarts,
): Promise<string | null> {
  const up = stack.workers
    .map((worker, index) => ({ worker, index }))
    .filter(({ worker }) => worker.child.exitCode === null && worker.child.signalCode === null);
  const texts = await scrape(up.map(({ worker }) => worker.url));
  const busy = up.filter((_, i) => sumMetric([texts[i] ?? ''], 'hostctl_worker_active_jobs') > 0);
  const victims = busy.length > 0 ? busy : up;
  if (victims.length === 0) return null;
  await Promise.all(victims.map(({ worker }) => stack.signal(worker, 'SIGKILL')));
  const row = await ctx.db.deployment.findUnique({ where: { id: deploymentId }, select: { step: true } });
  for (const { index } of victims) restarts.restart(index);
  return row?.step ?? null;
}

/** Once the deployment is final: exactly one set left, running, and it is the current release's. */
async function checkOneCurrentSet(ctx: PhaseContext, serviceId: string): Promise<void> {
  const current = await ctx.db.deployment.findFirst({
    where: { serviceId, status: 'succeeded' },
    orderBy: { createdAt: 'desc' },
    select: { id: true },
  });
  let deployments: string[] = [];
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(250)) {
    const found = await ctx.workloads.units({ serviceId });
    deployments = [...setsOf(found).keys()];
    if (deployments.length === 1 && found.every((unit) => unit.state === 'running')) break;
  }
  ctx.report.check(
    deployments.length === 1 && deployments[0] === current?.id,
    `after a cutover under kills: sets ${deployments.join(', ') || 'none'}, current release ${current?.id ?? 'none'}`,
  );
}
