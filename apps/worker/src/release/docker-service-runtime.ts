import { hostname } from 'node:os';
import { COMPONENT_LABEL, DEPLOYMENT_LABEL, DomainError } from '@hostctl/domain';
import type { Plan } from '@hostctl/compose';
import type { ComponentObservation, ServiceRuntime } from '../adapters/service-runtime.js';
import { serviceObjects } from '../pipeline/service-objects.js';
import { PermanentStepError } from '../pipeline/step-errors.js';
import { listSets, removeSet, webAddress } from './container-sets.js';
import { cutover, ReleaseUndone, type ReleaseDeps } from './release-engine.js';

/**
 * ServiceRuntime on the single Docker engine: the release engine's cutover (container sets side by
 * side, verify, stabilise, route, retire) behind the driver-neutral interface, so one contract
 * suite holds both drivers to the same promises. The release serving now is found by its labels.
 * Production's single-engine path does not go through it yet: deploy-pipeline.ts calls the
 * release engine and takes only dockerWarnings from here (issue 28).
 */
export function createDockerServiceRuntime(deps: ReleaseDeps): ServiceRuntime {
  const { runtime } = deps;

  return {
    warnings: dockerWarnings,

    async up(release, log, signal) {
      const objects = serviceObjects(release.serviceId, deps.instance);
      const current = (await currentDeployment(release.serviceId)) ?? undefined;
      const previous =
        current && current !== release.deploymentId ? { deploymentId: current, plan: undefined } : undefined;
      // The pipeline records and logs them when it prepares the plan (warnings()).
      const warnings = dockerWarnings(release.plan);
      try {
        await cutover(deps, {
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

    async tearDown(serviceId) {
      const objects = serviceObjects(serviceId, deps.instance);
      for (const deploymentId of (await listSets(runtime, objects)).keys())
        await removeSet(runtime, objects.set(deploymentId), undefined);
      for (const network of await runtime.listNetworks(objects.selector))
        await runtime.removeNetwork(network.id);
      for (const volume of await runtime.listVolumes(objects.selector))
        await runtime.removeVolume(volume.name);
    },
  };

  /** The deployment whose containers run (the newest label wins if a cutover was interrupted). */
  async function currentDeployment(serviceId: string): Promise<string | undefined> {
    const containers = await runtime.listContainers(serviceObjects(serviceId, deps.instance).selector);
    return containers.find((container) => container.state === 'running')?.labels[DEPLOYMENT_LABEL];
  }
}

/** What the single engine does not honour from a plan (Swarm's deploy settings). */
export function dockerWarnings(plan: Plan): string[] {
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
