import { hostname } from 'node:os';
import { COMPONENT_LABEL, DEPLOYMENT_LABEL, DomainError, RUN_LABEL, STANDBY_LABEL } from '@hostctl/domain';
import type { Plan } from '@hostctl/compose';
import type { ContainerExec } from '../../adapters/container-exec.js';
import type { ContainerTelemetry } from '../../adapters/telemetry.js';
import { TerminalUnavailable, type TerminalExec } from '../../adapters/terminal-exec.js';
import { serviceObjects } from '../../pipeline/service-objects.js';
import { PermanentStepError } from '../../pipeline/step-errors.js';
import { webAddress } from '../../release/container-sets.js';
import {
  cutover,
  ReleaseUndone,
  type CurrentRelease,
  type ReleaseDeps,
} from '../../release/release-engine.js';
import { storedPlan } from '../../release/release-images.js';
import { removeStraySetsOfServices } from '../../release/stray-sets.js';
import { runOneOff } from '../../runs/one-off-container.js';
import { runReleaseCommand } from '../../runs/release-command.js';
import type { ComponentObservation, RuntimeDriver } from '../driver.js';
import { removeAll } from '../engine-objects.js';
import { dockerLifecycle } from './docker-lifecycle.js';
import { dockerRestoreTarget } from './docker-restore.js';

export interface DockerDriverDeps extends ReleaseDeps {
  /** Usage of the engine's containers, for the observers. */
  telemetry: ContainerTelemetry;
  /** `docker exec` (adapters/container-exec.ts); without it (the fake engine) execInComponent refuses. */
  exec?: ContainerExec;
  /** `docker exec -it` (adapters/terminal-exec.ts); without it (the fake engine) terminals do not open. */
  terminal?: TerminalExec;
}

/**
 * RUNTIME=docker: the release engine's cutover on one Docker engine (container sets side by side,
 * verify, stabilise, route, retire; release/release-engine.ts), start/stop/restart on the current
 * set, the reconciler's restore and stray-set sweep. The contract suite's `up` runs the same
 * cutover production's deploy runs (`bringUp`), without the deployment's checkpoints.
 */
export function createDockerDriver(deps: DockerDriverDeps): RuntimeDriver {
  const { runtime } = deps;

  const driver: RuntimeDriver = {
    warnings: dockerWarnings,

    async up(release, log, signal) {
      const objects = serviceObjects(release.serviceId, deps.instance);
      const current = (await currentDeployment(release.serviceId)) ?? undefined;
      const previous =
        current && current !== release.deploymentId ? { deploymentId: current, plan: undefined } : undefined;
      // The pipeline records and logs them when it prepares the plan (warnings()).
      const warnings = dockerWarnings(release.plan);
      try {
        await driver.bringUp({
          service: { id: release.serviceId, name: objects.serviceId, url: '' },
          deploymentId: release.deploymentId,
          plan: release.plan,
          previous,
          log,
          signal: signal ?? new AbortController().signal,
          checkpoint: async () => {},
          onOrder: async () => {},
          isFinal: () => true,
        });
      } catch (error) {
        if (!(error instanceof ReleaseUndone)) throw error;
        const reason = error.reason;
        if (reason instanceof DomainError || reason instanceof PermanentStepError) throw reason;
        throw new PermanentStepError(error.message, { cause: reason });
      }
      return { warnings };
    },

    async observe(serviceId) {
      const containers = await runtime.listContainers(serviceObjects(serviceId, deps.instance).selector);
      const byComponent = new Map<string, ComponentObservation>();
      for (const container of containers) {
        const component = container.labels[COMPONENT_LABEL] ?? container.name;
        const deploymentId = container.labels[DEPLOYMENT_LABEL] ?? '';
        const key = `${deploymentId}/${component}`;
        const entry = byComponent.get(key) ?? {
          component,
          deploymentId,
          desiredReplicas: 1,
          runningReplicas: 0,
          tasks: [],
        };
        if (container.state === 'running') entry.runningReplicas += 1;
        entry.tasks.push({
          id: container.id,
          node: hostname(),
          state: container.state,
          desiredState: container.state === 'running' ? 'running' : 'shutdown',
        });
        byComponent.set(key, entry);
      }
      return [...byComponent.values()].sort((a, b) => a.component.localeCompare(b.component));
    },

    async webEndpoints(release) {
      const web = release.plan.web;
      if (!web) return [];
      const set = serviceObjects(release.serviceId, deps.instance).set(release.deploymentId);
      const host = await webAddress(runtime, set, web);
      return host ? [{ host, port: web.port }] : [];
    },

    tearDown: (serviceId) => removeAll(deps, serviceId),

    /** The current release when its set exists on this host (else there is nothing to cut over from). */
    async serving(serviceId, last) {
      if (!last) return undefined;
      const set = serviceObjects(serviceId, deps.instance).set(last.id);
      if ((await runtime.listContainers(set.selector)).length === 0) return undefined;
      return { deploymentId: last.id, plan: storedPlan(last) };
    },

    async isServing(serviceId, release: CurrentRelease) {
      const set = serviceObjects(serviceId, deps.instance).set(release.deploymentId);
      const containers = await runtime.listContainers(set.selector);
      return containers.length > 0 && containers.every((container) => container.state === 'running');
    },

    bringUp: (run) => cutover(deps, run),

    runReleaseCommand: (run, previous, plan) =>
      runReleaseCommand(
        (job) => driver.runOnce(job),
        { ...run, servingDeploymentId: previous?.deploymentId },
        plan,
      ),

    async runOnce(job) {
      const objects = serviceObjects(job.serviceId, deps.instance);
      const set = objects.set(job.networkOf);
      await runtime.ensureNetwork(set.network, set.networkLabels, { bridge: set.bridge });
      return runOneOff(runtime, { ...job, objects, set, instance: deps.instance });
    },

    async removeRunLeftovers(runId) {
      for (const leftover of await runtime.listContainers({ [RUN_LABEL]: runId }))
        await runtime.removeContainer(leftover.id);
    },

    runOutput: deps.telemetry,

    lifecycle: (service, action, last) => dockerLifecycle(deps, service, action, last),

    restoreTarget: dockerRestoreTarget(deps),

    sweepLeftovers: (leftovers) =>
      removeStraySetsOfServices({ ...leftovers, runtime, instance: deps.instance }),

    refusal: () => undefined,

    async execInComponent(target, argv, options) {
      if (!deps.exec) throw new PermanentStepError('this engine runs no commands in containers');
      const containers = await runtime.listContainers({
        ...serviceObjects(target.serviceId, deps.instance).selector,
        [COMPONENT_LABEL]: target.component,
      });
      const running = containers.filter((container) => container.state === 'running');
      const chosen =
        running.find((container) => container.labels[DEPLOYMENT_LABEL] === target.deploymentId) ?? running[0];
      if (!chosen) throw new PermanentStepError(`no container of ${target.component} is running`);
      return deps.exec.exec(chosen.id, argv, options);
    },

    terminals: {
      // The first running container of the component by name: any of its replicas will do.
      async find(serviceId, component) {
        const containers = await runtime.listContainers({
          ...serviceObjects(serviceId, deps.instance).selector,
          [COMPONENT_LABEL]: component,
        });
        const chosen = containers
          .filter((item) => item.state === 'running' && item.labels[STANDBY_LABEL] === undefined)
          .sort((a, b) => a.name.localeCompare(b.name))[0];
        if (!chosen) throw new TerminalUnavailable(`no container of component ${component} is running`);
        return { id: chosen.id, name: chosen.name };
      },
      open: (containerId, command, size) =>
        deps.terminal
          ? deps.terminal.open(containerId, command, size)
          : Promise.reject(new TerminalUnavailable('this engine opens no terminals')),
    },

    observed: { containers: runtime, telemetry: deps.telemetry },
  };
  return driver;

  /** The deployment whose containers run (the newest label wins if a cutover was interrupted). */
  async function currentDeployment(serviceId: string): Promise<string | undefined> {
    const containers = await runtime.listContainers(serviceObjects(serviceId, deps.instance).selector);
    return containers.find((container) => container.state === 'running')?.labels[DEPLOYMENT_LABEL];
  }
}

/** What the single engine does not honour from a plan (Swarm's deploy settings). */
function dockerWarnings(plan: Plan): string[] {
  const warnings: string[] = [];
  for (const container of plan.containers) {
    const at = `services.${container.name}.deploy`;
    if ((container.replicas ?? 1) > 1)
      warnings.push(
        `${at}.replicas: one engine runs one container per component; ${container.replicas} asked`,
      );
    if (container.placement) warnings.push(`${at}.placement: ignored on a single engine`);
    if (container.reservations) warnings.push(`${at}.resources.reservations: ignored on a single engine`);
  }
  return warnings;
}
