import type { Plan } from '@hostctl/compose';
import type { RouteTarget, ServiceRouter } from '../adapters/router.js';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { DeployLog } from '../pipeline/deploy-log.js';
import type { ReadinessOptions } from '../pipeline/readiness.js';
import { serviceObjects, type ServiceObjects, type SetObjects } from '../pipeline/service-objects.js';
import {
  createSet,
  ensureSetNetwork,
  ensureVolumes,
  isSetRunning,
  removeStraySets,
  removeUnusedNetworks,
  removeSet,
  restartSet,
  setContainerIds,
  startSet,
  stopSet,
  verifySet,
  webAddress,
} from './container-sets.js';
import { describeWindow, drainWindow, stabilizationWindow, type ReleaseEvidence } from './release-windows.js';
import { describeWatchEnd, watchSet } from './set-watch.js';
import { ReleaseWaiting, type Continuation } from './release-waiting.js';
import { chooseUpdateOrder, type UpdateOrder } from './update-order.js';

/**
 * The one way a plan is brought up (docs/worker.md, "Releases and cutover"). `cutover` replaces
 * the current release with a new one: network, volumes, [stop_previous], create, start, verify,
 * stabilize, route, drain, retire. Until `route` the new set receives no traffic, so a failure
 * there leaves the previous release serving; a failure while draining routes back to it. Every
 * step is idempotent: a retried job runs them again and continues with what it finds.
 */
export const RELEASE_STEPS = [
  'network',
  'volumes',
  'stop_previous',
  'create',
  'start',
  'verify',
  'stabilize',
  'route',
  'drain',
  'retire',
] as const;
export type ReleaseStep = (typeof RELEASE_STEPS)[number];

export interface ReleaseDeps {
  runtime: ContainerRuntime;
  router: ServiceRouter;
  instance: string;
  readiness: Omit<ReadinessOptions, 'signal'>;
  /** RELEASE_STABILIZATION_MS and RELEASE_DRAIN_MS: the longest each window lasts. */
  stabilizationMs: number;
  drainMs: number;
  /**
   * RELEASE_STABILIZATION_MIN_MS, RELEASE_DRAIN_MIN_MS and RELEASE_HEALTH_PASSES: when a window may
   * end on evidence (release/set-watch.ts). Absent: every window lasts its longest.
   */
  evidence?: ReleaseEvidence;
}

export interface ServiceRef {
  id: string;
  name: string;
  url: string;
}

/** The release serving now: its deployment and the plan it ran (unknown for very old ones). */
export interface CurrentRelease {
  deploymentId: string;
  plan: Plan | undefined;
}

export interface CutoverRun {
  service: ServiceRef;
  deploymentId: string;
  plan: Plan;
  previous: CurrentRelease | undefined;
  log: DeployLog;
  signal: AbortSignal;
  /** Records the step; throws when the deployment was cancelled meanwhile. */
  checkpoint(step: ReleaseStep): Promise<void>;
  onOrder(order: UpdateOrder): Promise<void>;
  /** Whether this failure ends the deployment (else the job is retried and resumes the steps). */
  isFinal: (error: unknown) => boolean;
  /** Windows that pause instead of holding the job (release-waiting.ts); absent: waited in place. */
  continuation?: Continuation;
}

/**
 * A deployment that ended without its release: the new set is gone and the previous release, when
 * `keptRelease` is set, serves (again). `switched`: the proxy had already been switched (rolled back).
 */
export class ReleaseUndone extends Error {
  constructor(
    readonly reason: unknown,
    readonly outcome: { switched: boolean; keptRelease?: string },
  ) {
    super(reason instanceof Error ? reason.message : String(reason), { cause: reason });
    this.name = 'ReleaseUndone';
  }
}

export async function cutover(deps: ReleaseDeps, run: CutoverRun): Promise<{ webIp?: string }> {
  const { runtime, router } = deps;
  const { plan, log, signal } = run;
  const objects = serviceObjects(run.service.id, deps.instance);
  const set = objects.set(run.deploymentId);
  const readiness = { ...deps.readiness, signal };
  const previous = run.previous
    ? { ...run.previous, set: objects.set(run.previous.deploymentId) }
    : undefined;
  const { order, reason } = chooseUpdateOrder(plan);
  const resumeAt = run.continuation?.resumeAt;
  // A resumed release (release-waiting.ts) skips the steps it had passed: they are done.
  const isDone = (step: ReleaseStep) =>
    resumeAt !== undefined && RELEASE_STEPS.indexOf(step) < RELEASE_STEPS.indexOf(resumeAt.step);
  const state = {
    stopped: isDone('stop_previous') && previous !== undefined && order === 'stop-first',
    // Resumed at `route`, the switch may or may not have happened: undo routes back either way.
    switched: plan.web !== undefined && (isDone('route') || resumeAt?.step === 'route'),
    retiring: false,
  };
  /** The checkpoint of a window step; resolves to when the window began. */
  const enterWindow = async (step: 'stabilize' | 'drain'): Promise<number> => {
    if (resumeAt?.step === step) {
      await run.checkpoint(step);
      return resumeAt.windowStartedAt;
    }
    const startedAt = Date.now();
    await (run.continuation ? run.continuation.enterWindow(step, startedAt) : run.checkpoint(step));
    return startedAt;
  };
  const watching = { pause: run.continuation !== undefined };
  try {
    let ids: Map<string, string>;
    let webIp: string | undefined;
    if (resumeAt) {
      ids = await setContainerIds(runtime, set);
      webIp = await webAddress(runtime, set, plan.web);
    } else {
      ({ ids, webIp } = await bringUpSet(deps, run, {
        objects,
        set,
        previous,
        order,
        reason,
        readiness,
        state,
      }));
    }
    // The window protects a release that serves now. With none (a first deploy, a restore) there is
    // nothing to keep serving meanwhile: holding the new release back only delays it, so it is
    // routed once verified. Stop-first has stopped the previous release already: holding the new
    // one back would only lengthen the gap, so it is routed at once and watched after the switch
    // instead (a failure there still starts the stopped release again and routes back to it).
    const stabilizing = stabilizationWindow(deps.stabilizationMs, deps.evidence);
    if (!isDone('stabilize')) {
      const startedAt = await enterWindow('stabilize');
      if (previous && !state.stopped) {
        if (!resumeAt)
          await log.info(
            `Watching the new release before it receives traffic (${describeWindow(stabilizing)})`,
          );
        const end = await watchSet(runtime, plan, ids, stabilizing, signal, 'while stabilising', {
          ...watching,
          startedAt,
        });
        await log.info(`The new release held ${describeWatchEnd(end)}`);
      }
    }
    // Still running (start-first): the proxy goes on counting its requests in flight after the
    // switch, when the drain may end once they are over.
    const previousWeb = previous?.plan?.web;
    const countsInFlight = deps.evidence !== undefined && router.inFlight !== undefined;
    const previousAddress =
      previous && !state.stopped && previousWeb && countsInFlight
        ? await webAddress(runtime, previous.set, previousWeb)
        : undefined;
    const draining =
      previousWeb && previousAddress ? [{ host: previousAddress, port: previousWeb.port }] : [];
    if (!isDone('route')) {
      await run.checkpoint('route');
      if (plan.web && webIp) {
        state.switched = true;
        await route(router, run.service, webIp, plan.web.port, log, draining);
      }
    }
    if (previous && !isDone('drain')) {
      const startedAt = await enterWindow('drain');
      const window = state.stopped
        ? stabilizing
        : drainWindow({
            longestMs: deps.drainMs,
            evidence: deps.evidence,
            previous: previous.plan,
            draining,
            inFlight: router.inFlight?.bind(router),
          });
      if (resumeAt?.step !== 'drain')
        await log.info(
          state.stopped
            ? `Watching the new release after the switch; the stopped previous release is kept until then (${describeWindow(window)})`
            : `Draining the previous release until its requests in flight end (${describeWindow(window)}); still watching the new one`,
        );
      const end = await watchSet(runtime, plan, ids, window, signal, 'after the switch', {
        ...watching,
        startedAt,
      });
      await log.info(`${state.stopped ? 'The new release held' : 'Drained'} ${describeWatchEnd(end)}`);
    }
    await run.checkpoint('retire');
    state.retiring = true;
    // The route keeps naming the previous address (never sent a request) until its next change:
    // dropping it now would be one more Caddy reload, and each reload resets a few connections.
    if (previous) {
      await log.info(`Retiring the previous release ${previous.deploymentId}`);
      // The new release serves already: a removal that fails must not fail it. Once it is the
      // current release, the old set is a leftover the reconciler removes.
      await removeSet(runtime, previous.set, previous.plan).catch(async (error: unknown) => {
        await log.error(
          `Could not remove the previous release yet (${(error as Error).message}); the reconciler removes it`,
        );
      });
    }
    await removeUnusedNetworks(runtime, objects, set);
    return webIp ? { webIp } : {};
  } catch (error) {
    // A pause is no failure; past the point of no return, or a failure a retry may get past: the
    // job resumes the steps.
    if (error instanceof ReleaseWaiting || state.retiring || !run.isFinal(error)) throw error;
    const keptRelease = await undo(deps, run, set, previous, state);
    throw new ReleaseUndone(error, { switched: state.switched, ...(keptRelease ? { keptRelease } : {}) });
  }
}

/**
 * network, volumes, [stop_previous], create, start, verify: the new set, started and ready.
 * Until the switch it receives no traffic.
 */
async function bringUpSet(
  deps: ReleaseDeps,
  run: CutoverRun,
  context: {
    objects: ServiceObjects;
    set: SetObjects;
    previous: (CurrentRelease & { set: SetObjects }) | undefined;
    order: UpdateOrder;
    reason: string;
    readiness: ReadinessOptions;
    /** `stopped` is set before the previous release is stopped: an undo must start it again. */
    state: { stopped: boolean };
  },
): Promise<{ ids: Map<string, string>; webIp?: string }> {
  const { runtime, router } = deps;
  const { plan, log } = run;
  const { objects, set, previous, order, readiness } = context;
  await run.onOrder(order);
  await log.info(
    previous
      ? `Update order ${order}: ${context.reason}`
      : `Update order ${order} (${context.reason}); no previous release is running, nothing to cut over from`,
  );
  await run.checkpoint('network');
  // Never more than two sets: whatever is neither the serving release nor this one goes.
  const strays = await removeStraySets(runtime, objects, [run.deploymentId, previous?.deploymentId], log);
  // A deployment interrupted after its switch (then superseded) may have had the traffic.
  const web = previous?.plan?.web;
  const address = strays > 0 && previous && web ? await webAddress(runtime, previous.set, web) : undefined;
  if (web && address) await route(router, run.service, address, web.port, log);
  await ensureSetNetwork(runtime, set, log);
  await run.checkpoint('volumes');
  await ensureVolumes(runtime, plan, objects, log);
  if (previous && order === 'stop-first') {
    await run.checkpoint('stop_previous');
    await log.info(`Stopping the previous release ${previous.deploymentId} (stop-first)`);
    context.state.stopped = true;
    await stopSet(runtime, previous.set, previous.plan);
  }
  await run.checkpoint('create');
  const ids = await createSet(runtime, plan, objects, set, log);
  await run.checkpoint('start');
  await startSet(runtime, plan, ids, log, readiness);
  await run.checkpoint('verify');
  const { webIp } = await verifySet(runtime, plan, ids, log, readiness);
  return { ids, ...(webIp ? { webIp } : {}) };
}

/**
 * Puts the previous release back in charge and removes the new set. Runs after a failure or a
 * cancel, so it must not depend on the run's (possibly aborted) signal.
 */
async function undo(
  deps: ReleaseDeps,
  run: CutoverRun,
  set: SetObjects,
  previous: (CurrentRelease & { set: SetObjects }) | undefined,
  state: { stopped: boolean; switched: boolean },
): Promise<string | undefined> {
  const { runtime, router, readiness } = deps;
  const { log } = run;
  let serving = false;
  if (previous) {
    if (state.stopped) {
      await log.info(`Starting the previous release ${previous.deploymentId} again`);
      await restartSet(runtime, previous.set, previous.plan, readiness).catch(async (error: unknown) => {
        await log.error(`The previous release did not come back: ${(error as Error).message}`);
      });
    }
    const web = previous.plan?.web;
    const address = await webAddress(runtime, previous.set, web);
    if ((state.switched || state.stopped) && web && address) {
      await route(router, run.service, address, web.port, log);
      await log.info(`Routing back to the previous release ${previous.deploymentId}`);
    }
    serving = web ? address !== undefined : await isSetRunning(runtime, previous.set);
  }
  await removeSet(runtime, set, run.plan, false);
  await log.info('Removed the new release’s containers');
  return serving && previous ? previous.deploymentId : undefined;
}

export interface RestoreRun {
  service: ServiceRef;
  /** The current release: its set is what is brought back. */
  deploymentId: string;
  plan: Plan;
  log: DeployLog;
}

/**
 * Brings the current release's own set back (the reconciler's restore, start/restart of a service
 * whose containers were removed): the same steps without a cutover. Only what is started has to
 * prove itself ready; a container still running was never down.
 */
export async function restoreRelease(deps: ReleaseDeps, run: RestoreRun): Promise<void> {
  const { runtime } = deps;
  const objects = serviceObjects(run.service.id, deps.instance);
  const set = objects.set(run.deploymentId);
  await ensureSetNetwork(runtime, set, run.log);
  await ensureVolumes(runtime, run.plan, objects, run.log);
  const ids = await createSet(runtime, run.plan, objects, set, run.log);
  const stopped = new Map<string, string>();
  for (const [component, id] of ids)
    if (!(await runtime.inspectContainer(id))?.isRunning) stopped.set(component, id);
  const toStart = { ...run.plan, containers: run.plan.containers.filter((item) => stopped.has(item.name)) };
  // dependsOn may name a container that is already running: it is ready, nothing to wait for.
  await startSet(runtime, toStart, stopped, run.log, deps.readiness);
  await verifySet(runtime, toStart, stopped, run.log, deps.readiness);
  // A recreated or restarted container has a new address: the route must follow it.
  const web = run.plan.web;
  const address = await webAddress(runtime, set, web);
  if (web && address) await route(deps.router, run.service, address, web.port, run.log);
}

/**
 * Points the service's route at one address. `draining`: the previous release's, kept known to
 * the proxy so it counts their requests in flight.
 */
async function route(
  router: ServiceRouter,
  service: ServiceRef,
  host: string,
  port: number,
  log: DeployLog,
  draining: RouteTarget[] = [],
) {
  const notes = await router.upsert({
    serviceId: service.id,
    serviceName: service.name,
    url: service.url,
    targets: [{ host, port }],
    ...(draining.length > 0 ? { draining } : {}),
  });
  await log.info(`Routing ${service.url} to ${host}:${port}`);
  for (const note of notes ?? []) await log.info(note);
}
