import type { Plan } from '@hostctl/compose';
import { dialAddress, upstreamKey, type RouteTarget, type ServiceRouter } from '../adapters/router.js';
import type { ComponentObservation, ServiceRuntime } from '../runtime/driver.js';
import type { SwarmStandby } from '../adapters/swarm-standby.js';
import type { DeployLog } from '../pipeline/deploy-log.js';
import { messageOf } from '../pipeline/step-errors.js';
import type { ReleaseStep, ServiceRef } from './release-engine.js';

/** How often a follower reads the tasks while Swarm replaces them. */
export const TASK_FOLLOW_MS = 500;

/**
 * A release under RUNTIME=swarm (docs/swarm-runtime.md). Swarm replaces the tasks itself
 * (start-first, its monitor, its rollback: swarm-spec.ts), so the worker's part is: write the specs
 * and wait for Swarm's verdict (`create`, `stabilize`), then send the proxy to the new release's
 * tasks (`route`). While Swarm swaps tasks, a follower keeps the route on every running web task
 * of the previous release (and the standby), adding a new task once it has run for the
 * stabilisation window (followedTargets), so the proxy always has a task that answers (and Caddy
 * retries another on a refused dial: caddy-routes.ts). A first release is routed only once it
 * runs, as on the single engine.
 *
 * Before an update, a standby of the serving release's web component starts (swarm-standby.ts):
 * Swarm stops the old task as soon as the new one runs, so without it a release that crashes
 * within Swarm's monitor leaves nothing that answers until the rollback's task runs. It goes once
 * the proxy is routed to the new release's tasks, or once the rolled-back tasks run after a failure;
 * like the old task Swarm stops, it gets the stop grace period to finish what it was sent.
 *
 * The switch, in the single engine's sense, is the first route that includes a task of the new
 * release: a release that fails before any of its tasks ran never took traffic (`failed`).
 */
export interface SwarmReleaseDeps {
  serviceRuntime: ServiceRuntime;
  router: ServiceRouter;
  /** Holds the serving release's web component during an update (absent: no standby). */
  standby?: SwarmStandby;
  /** How often the follower reads the tasks while Swarm updates (default TASK_FOLLOW_MS). */
  followMs?: number;
  /**
   * RELEASE_STABILIZATION_MS: how long a new task runs before the follower sends it traffic, the
   * single engine's window before the switch (default 0: at once).
   */
  settleMs?: number;
}

export interface SwarmReleaseRun {
  service: ServiceRef;
  deploymentId: string;
  plan: Plan;
  /** A release serves now: its route is followed during the update. */
  hasPrevious: boolean;
  log: DeployLog;
  signal: AbortSignal;
  checkpoint(step: ReleaseStep): Promise<void>;
  /**
   * The proxy was sent to a task of this release: from then on visitors reached it, and a failure
   * is a rollback after the switch (`rolled_back`), as on the single engine.
   */
  onRouted?: () => void;
}

export async function swarmRelease(deps: SwarmReleaseDeps, run: SwarmReleaseRun): Promise<void> {
  const release = { serviceId: run.service.id, deploymentId: run.deploymentId, plan: run.plan };
  const web = run.plan.web;
  await run.checkpoint('create');
  const mayHold = Boolean(web && run.hasPrevious && deps.standby);
  let isHeld = false;
  try {
    if (web && mayHold) isHeld = await holdStandby(deps, run, web.container);
    const follower = web && run.hasPrevious ? followRunningTasks(deps, run) : undefined;
    try {
      await run.checkpoint('stabilize');
      await deps.serviceRuntime.up(release, run.log, run.signal);
    } catch (error) {
      // Swarm rolled back and the previous release's tasks run again (swarm-tasks.ts waits for
      // that): the standby goes before the follower routes the proxy one last time.
      if (isHeld) await releaseStandby(deps, run);
      throw error;
    } finally {
      await follower?.stop();
    }
    if (!web) return;
    await run.checkpoint('route');
    const targets = await deps.serviceRuntime.webEndpoints(release);
    if (targets.length === 0) throw new Error(`no running task of ${web.container} publishes its port`);
    await route(deps.router, run, targets);
    run.onRouted?.();
  } finally {
    // Also when holding one was cut short (a cancel): it may exist all the same.
    if (mayHold) await releaseStandby(deps, run);
  }
}

/** A standby is a safety net: when it cannot be had, the release goes on without one. */
async function holdStandby(
  deps: SwarmReleaseDeps,
  run: SwarmReleaseRun,
  component: string,
): Promise<boolean> {
  const web = run.plan.containers.find((container) => container.name === component);
  if (!deps.standby || !web) return false;
  try {
    return await deps.standby.hold(run.service.id, web, run.deploymentId, run.log, run.signal);
  } catch (error) {
    if (run.signal.aborted) throw error;
    await run.log.info(`No standby of the serving release: ${messageOf(error)}`);
    return false;
  }
}

/** Idempotent; one left behind (the engine refused) is removed by the reconciler. */
async function releaseStandby(deps: SwarmReleaseDeps, run: SwarmReleaseRun): Promise<void> {
  await deps.standby
    ?.release(run.service.id)
    .catch((error: unknown) => run.log.info(`Could not remove the standby yet: ${messageOf(error)}`));
}

/** Whether the release's components run (after a failed update Swarm rolled back to it). */
export async function isServingOnSwarm(
  serviceRuntime: ServiceRuntime,
  serviceId: string,
  deploymentId: string,
): Promise<boolean> {
  const components = await serviceRuntime.observe(serviceId);
  return (
    components.some((item) => !item.standby) &&
    components.every(
      (item) => item.standby || (item.deploymentId === deploymentId && item.runningReplicas > 0),
    )
  );
}

/**
 * Routes to every running task of the web component, whichever release it belongs to, each time
 * that set changes; the last set is routed again on stop (a failed update: the rolled-back tasks).
 */
function followRunningTasks(deps: SwarmReleaseDeps, run: SwarmReleaseRun) {
  let routed = '';
  let stopped = false;
  const sync = async () => {
    const components = await deps.serviceRuntime.observe(run.service.id);
    const { targets, includesRelease } = followedTargets(
      components,
      run.deploymentId,
      deps.settleMs ?? 0,
      Date.now(),
    );
    const key = upstreamKey(targets);
    if (targets.length === 0 || key === routed) return;
    await route(deps.router, run, targets);
    routed = key;
    if (includesRelease) run.onRouted?.();
  };
  const loop = (async () => {
    while (!stopped) {
      // A failed read is tried again next round: the update itself decides the deployment.
      await sync().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, deps.followMs ?? TASK_FOLLOW_MS));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await sync().catch(() => undefined);
    },
  };
}

/**
 * Where the proxy goes while Swarm replaces the web tasks: every running one (the standby's and the
 * previous release's included), but a task of the new release only once it has run for `settleMs`,
 * as the single engine watches a new set before the switch. A release that crashes within that
 * window never took traffic (`failed`, not `rolled_back`): seen before, a release that answered for
 * 4 s and then exited got 67 of 586 requests and caused a 502. When nothing else runs, the new
 * tasks are routed all the same: a task under watch answers, nothing at all does not.
 */
export function followedTargets(
  components: ComponentObservation[],
  deploymentId: string,
  settleMs: number,
  now: number,
): { targets: RouteTarget[]; includesRelease: boolean } {
  const running = components.flatMap((item) =>
    item.tasks
      .filter((task) => task.state === 'running' && task.endpoint)
      .map((task) => ({ task, isNew: item.standby !== true && task.deploymentId === deploymentId })),
  );
  const settled = running.filter(
    ({ task, isNew }) => !isNew || (task.runningSince !== undefined && now - task.runningSince >= settleMs),
  );
  const chosen = settled.length > 0 ? settled : running;
  return {
    targets: chosen.map(({ task }) => task.endpoint!),
    includesRelease: chosen.some(({ isNew }) => isNew),
  };
}

async function route(router: ServiceRouter, run: SwarmReleaseRun, targets: RouteTarget[]) {
  const notes = await router.upsert({
    serviceId: run.service.id,
    serviceName: run.service.name,
    url: run.service.url,
    targets,
  });
  await run.log.info(`Routing ${run.service.url} to ${targets.map(dialAddress).join(', ')}`);
  for (const note of notes ?? []) await run.log.info(note);
}
