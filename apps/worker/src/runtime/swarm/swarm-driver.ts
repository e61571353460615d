import type { RegistryAuth } from '../../adapters/registry-auth.js';
import type { SwarmJobs } from '../../adapters/swarm-jobs.js';
import type { SwarmLifecycle } from '../../adapters/swarm-lifecycle.js';
import type { SwarmRestarts } from '../../adapters/swarm-restarts.js';
import type { SwarmStandby } from '../../adapters/swarm-standby.js';
import { PermanentStepError } from '../../pipeline/step-errors.js';
import { distributeImages } from '../../release/image-distribution.js';
import type { RegistryAccess } from '../../release/registry-access.js';
import { ReleaseUndone, type ReleaseDeps } from '../../release/release-engine.js';
import { storedPlan } from '../../release/release-images.js';
import { isServingOnSwarm, swarmRelease } from '../../release/swarm-release.js';
import { runReleaseCommand } from '../../runs/release-command.js';
import type {
  BringUpRun,
  ObservedRuntime,
  OneOffWork,
  RuntimeDriver,
  ServiceRuntime,
  Terminals,
} from '../driver.js';
import { removeAll } from '../engine-objects.js';
import { removeLeftoverStandbys } from './leftover-standbys.js';
import { swarmRestoreTarget } from './swarm-restore.js';

export interface SwarmDriverDeps {
  /**
   * This machine's engine, which still pulls and builds (and holds what it built), the router,
   * the instance and RELEASE_STABILIZATION_MS (how long a new task runs before it gets traffic).
   */
  engine: Pick<ReleaseDeps, 'runtime' | 'router' | 'instance' | 'stabilizationMs'>;
  /** The Swarm services of a release (adapters/swarm-runtime.ts). */
  services: ServiceRuntime;
  lifecycle: SwarmLifecycle;
  restarts: SwarmRestarts;
  /** Holds the serving release's web component during an update (adapters/swarm-standby.ts). */
  standby?: SwarmStandby;
  /** With `registry` set, the plan's images are pushed there for the nodes (release/image-distribution.ts). */
  distribution: {
    registry?: string;
    registryAuth?: RegistryAuth;
    /** REGISTRY_PULL, when the nodes pull from another registry than `registry`. */
    pullRegistry?: string;
    access?: RegistryAccess;
  };
  /** The manager's tasks standing for containers, and their usage (adapters/swarm-telemetry.ts). */
  observed: ObservedRuntime;
  /** One-off commands (runs, release commands) as Swarm jobs (adapters/swarm-jobs.ts). */
  jobs: SwarmJobs;
  /** Terminals on the node that runs the task (adapters/swarm-terminals.ts). */
  terminals: Terminals;
}

/** What Swarm does not do yet: the message the run or deployment fails with. Runs and release commands run as Swarm jobs. */
const REFUSALS: Partial<Record<OneOffWork, string>> = {
  // Volumes live on the nodes, not on this engine (docs/backups.md, open).
  backup: 'backups under RUNTIME=swarm are not supported yet (docs/backups.md)',
  restore: 'restores under RUNTIME=swarm are not supported yet (docs/backups.md)',
};

/**
 * RUNTIME=swarm: a release runs as one Swarm service per component on the manager. Swarm keeps
 * the previous definition and rolls a failed update back by itself (release/swarm-release.ts
 * follows the tasks with the route meanwhile); start/stop/restart scale the services; the
 * reconciler starts again what Swarm's restart policy leaves down and removes dead standbys.
 */
export function createSwarmDriver(deps: SwarmDriverDeps): RuntimeDriver {
  const { services: swarm, engine } = deps;
  const { registry, registryAuth, pullRegistry, access } = deps.distribution;
  /** The plan's images pushed for the nodes (a no-op without REGISTRY); pushing again is cheap. */
  const forNodes = (
    plan: BringUpRun['plan'],
    run: { serviceId: string; deploymentId: string; log: BringUpRun['log']; signal: AbortSignal },
  ) =>
    registry
      ? distributeImages(engine.runtime, plan, {
          registry,
          ...(registryAuth ? { auth: registryAuth } : {}),
          ...(pullRegistry ? { pullRegistry } : {}),
          ...(access ? { access } : {}),
          serviceId: run.serviceId,
          deploymentId: run.deploymentId,
          log: run.log,
          signal: run.signal,
        })
      : Promise.resolve(plan);

  return {
    warnings: (plan) => swarm.warnings(plan),
    up: (release, log, signal) => swarm.up(release, log, signal),
    observe: (serviceId) => swarm.observe(serviceId),
    webEndpoints: (release) => swarm.webEndpoints(release),

    async tearDown(serviceId) {
      // Throws (the job retries) until the swarm has nothing of the service left: the count of
      // removeAll only sees this engine.
      await swarm.tearDown(serviceId);
      return removeAll(engine, serviceId);
    },

    async serving(serviceId, last) {
      if (!last || (await swarm.observe(serviceId)).length === 0) return undefined;
      return { deploymentId: last.id, plan: storedPlan(last) };
    },

    isServing: (serviceId, release) => isServingOnSwarm(swarm, serviceId, release.deploymentId),

    async bringUp(run) {
      let hasTakenTraffic = false;
      try {
        const plan = await forNodes(run.plan, { ...run, serviceId: run.service.id });
        await swarmRelease(
          {
            serviceRuntime: swarm,
            router: engine.router,
            settleMs: engine.stabilizationMs,
            ...(deps.standby ? { standby: deps.standby } : {}),
          },
          {
            service: run.service,
            deploymentId: run.deploymentId,
            plan,
            hasPrevious: run.previous !== undefined,
            log: run.log,
            signal: run.signal,
            checkpoint: run.checkpoint,
            onRouted: () => {
              hasTakenTraffic = true;
            },
          },
        );
        return {};
      } catch (error) {
        if (!run.isFinal(error)) throw error;
        // Swarm rolled a failed update back by itself (swarm-tasks.ts waits until it has); when the
        // release had taken traffic, that is a rollback after the switch.
        const kept = run.previous?.deploymentId;
        throw new ReleaseUndone(error, {
          switched: hasTakenTraffic,
          ...(kept && (await isServingOnSwarm(swarm, run.service.id, kept)) ? { keptRelease: kept } : {}),
        });
      }
    },

    // A Swarm job on the manager, before any Swarm service of the new release is written: its
    // image must reach the nodes first, as the release's own will (bringUp pushes the same again).
    async runReleaseCommand(run, previous, plan) {
      const distributed = await forNodes(plan, run);
      await runReleaseCommand(
        (job) => deps.jobs.run(job),
        { ...run, servingDeploymentId: previous?.deploymentId },
        { ...distributed, release: plan.release },
      );
    },

    runOnce: (job) => deps.jobs.run(job),
    removeRunLeftovers: (runId) => deps.jobs.remove(runId),
    // The manager's task logs, which reach every node.
    runOutput: deps.observed.telemetry,

    async lifecycle(service, action, last) {
      const plan = storedPlan(last);
      await deps.lifecycle.perform(service.id, action, plan);
      if (action === 'stop' || !last || !plan?.web) return;
      // New tasks publish new ports: the route goes to them.
      const targets = await swarm.webEndpoints({ serviceId: service.id, deploymentId: last.id, plan });
      if (targets.length === 0)
        throw new PermanentStepError('no task of the web component publishes its port');
      await engine.router.upsert({
        serviceId: service.id,
        serviceName: service.name,
        url: service.url,
        targets,
      });
    },

    restoreTarget: swarmRestoreTarget(deps.restarts),

    async sweepLeftovers(leftovers) {
      const standbys = deps.standby
        ? await removeLeftoverStandbys({ ...leftovers, standby: deps.standby })
        : 0;
      // Jobs whose worker died mid-run (its retried job, if any, removes its own sooner).
      const jobs = await deps.jobs.sweep();
      if (jobs > 0)
        leftovers.logger.info({ jobs }, 'reconciler: removed Swarm jobs of runs whose worker stopped');
      return standbys + jobs;
    },

    refusal: (work) => REFUSALS[work],

    // Backups are refused before any hook would run (REFUSALS.backup); said again, never skipped.
    execInComponent: () =>
      Promise.reject(
        new PermanentStepError('backup hooks do not run under RUNTIME=swarm yet (docs/backups.md#hooks)'),
      ),

    terminals: deps.terminals,
    observed: deps.observed,
  };
}
