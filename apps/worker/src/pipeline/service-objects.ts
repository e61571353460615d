import {
  COMPONENT_LABEL,
  DEPLOYMENT_LABEL,
  OWNER_LABEL,
  SERVICE_LABEL,
  SET_SIZE_LABEL,
  dockerNamePrefix,
  INSTANCE_LABEL,
} from '@hostctl/domain';
import type { PlanContainer } from '@hostctl/compose';
import { type ContainerSpec, type Labels } from '../adapters/runtime.js';
import { setBridge } from '../egress/sandbox-bridges.js';

/**
 * Deterministic names and labels of a service's Docker objects. Names derive from the service id
 * and, for containers and networks, from the deployment id, so a retried job finds what an earlier
 * attempt created and two releases of one service can run side by side during a cutover (each
 * container set on a network of its own: Docker DNS would otherwise answer a component name with
 * both sets' containers). Volumes are the service's and outlive deployments. Labels are how
 * everything is found and how the reconciler tells ours from anything else on the engine.
 */
export interface ServiceObjects {
  serviceId: string;
  volume(name: string): string;
  /** Labels of the volumes (no deployment: they outlive deployments). */
  labels: Labels;
  /**
   * Finds the service's objects. The service id alone, without the installation label, so a
   * changed QUEUE_PREFIX never hides a service's own containers from it.
   */
  selector: Labels;
  /** The objects of one deployment's container set. */
  set(deploymentId: string): SetObjects;
}

export interface SetObjects {
  deploymentId: string;
  network: string;
  /** Bridge interface of the network: a sandbox bridge, so the egress policy applies to it. */
  bridge: string;
  container(component: string): string;
  /** Labels of the set's network. */
  networkLabels: Labels;
  /** Finds the set's containers and network. */
  selector: Labels;
  /** `setSize`: the number of containers of the deployment (the reconciler notices a missing one). */
  containerLabels(component: string, setSize: number): Labels;
}

export function serviceObjects(serviceId: string, instance: string): ServiceObjects {
  const prefix = dockerNamePrefix(serviceId);
  const labels: Labels = { [OWNER_LABEL]: 'true', [SERVICE_LABEL]: serviceId, [INSTANCE_LABEL]: instance };
  const selector = { [SERVICE_LABEL]: serviceId };
  return {
    serviceId,
    volume: (name) => `${prefix}-${name}`,
    labels,
    selector,
    set: (deploymentId) => {
      const short = deploymentId.replace(/-/g, '').slice(0, 8);
      const setLabels = { ...labels, [DEPLOYMENT_LABEL]: deploymentId };
      return {
        deploymentId,
        network: `${prefix}-${short}`,
        bridge: setBridge(serviceId, deploymentId),
        container: (component) => `${prefix}-${component}-${short}`,
        networkLabels: setLabels,
        selector: { ...selector, [DEPLOYMENT_LABEL]: deploymentId },
        containerLabels: (component, setSize) => ({
          ...setLabels,
          [COMPONENT_LABEL]: component,
          [SET_SIZE_LABEL]: String(setSize),
        }),
      };
    },
  };
}

export function containerSpec(
  container: PlanContainer,
  objects: ServiceObjects,
  set: SetObjects,
  setSize: number,
): ContainerSpec {
  return {
    name: set.container(container.name),
    image: container.image,
    ...(container.command ? { command: container.command } : {}),
    ...(container.entrypoint ? { entrypoint: container.entrypoint } : {}),
    env: Object.entries(container.environment).map(([key, value]) => `${key}=${value}`),
    ...(container.workingDir ? { workingDir: container.workingDir } : {}),
    ...(container.user ? { user: container.user } : {}),
    ...(container.hostname ? { hostname: container.hostname } : {}),
    // Platform labels last: a tenant label can never override them (the parser also refuses the prefix).
    labels: { ...container.labels, ...set.containerLabels(container.name, setSize) },
    exposedPorts: container.ports,
    ...(container.healthcheck ? { healthcheck: container.healthcheck } : {}),
    init: container.init,
    restart: {
      name: container.restart,
      ...(container.restartMaxRetries !== undefined ? { maxRetries: container.restartMaxRetries } : {}),
    },
    ...(container.limits.memoryBytes ? { memoryBytes: container.limits.memoryBytes } : {}),
    ...(container.limits.nanoCpus ? { nanoCpus: container.limits.nanoCpus } : {}),
    ...(container.limits.pids ? { pidsLimit: container.limits.pids } : {}),
    mounts: container.volumes.map((mount) => ({
      volume: objects.volume(mount.volume),
      target: mount.target,
      readOnly: mount.readOnly,
    })),
    network: set.network,
    aliases: [container.name],
  };
}
