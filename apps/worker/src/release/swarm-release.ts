import type { Plan } from '@hostctl/compose';
import { dialAddress, upstreamKey, type RouteTarget, type ServiceRouter } from '../adapters/router.js';
import {
  runningWebEndpoints,
  type ComponentObservation,
  type ServiceRuntime,
} from '../adapters/service-runtime.js';
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
 * tasks (`route`). While Swarm swaps tasks, a follower keeps the route on every running web task,
 * old and new, so the proxy always has a task that answers (and Caddy retries another on a refused
 * dial: caddy-routes.ts). A first release is routed only once it runs, as on the single engine.
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
    const targets = runningWebEndpoints(components);
    const key = upstreamKey(targets);
    if (targets.length === 0 || key === routed) return;
    await route(deps.router, run, targets);
    routed = key;
    if (routesRelease(components, run.deploymentId)) run.onRouted?.();
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

/** Whether a running task of the release is among the web endpoints (runningWebEndpoints). */
function routesRelease(components: ComponentObservation[], deploymentId: string): boolean {
  return components.some(
    (item) =>
      !item.standby &&
      item.tasks.some(
        (task) => task.deploymentId === deploymentId && task.state === 'running' && task.endpoint,
      ),
  );
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
