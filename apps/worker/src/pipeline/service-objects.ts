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
import { serviceBridge } from '../egress/sandbox-bridges.js';

/**
 * Deterministic names and labels of a service's Docker objects. Names derive from the service id
 * so a retried job finds what an earlier attempt created; labels are how everything is found and
 * how the reconciler tells ours from anything else on the engine.
 */
export interface ServiceObjects {
  serviceId: string;
  network: string;
  /** Bridge interface of the network: a sandbox bridge, so the egress policy applies to it. */
  bridge: string;
  volume(name: string): string;
  container(name: string): string;
  /** Labels of the network and volumes (no deployment: they outlive deployments). */
  labels: Labels;
  /**
   * Finds the service's objects. The service id alone, without the installation label, so a
   * changed QUEUE_PREFIX never hides a service's own containers from it.
   */
  selector: Labels;
  /** `setSize`: the number of containers of the deployment (the reconciler notices a missing one). */
  containerLabels(deploymentId: string, component: string, setSize: number): Labels;
}

export function serviceObjects(serviceId: string, instance: string): ServiceObjects {
  const prefix = dockerNamePrefix(serviceId);
  const labels: Labels = { [OWNER_LABEL]: 'true', [SERVICE_LABEL]: serviceId, [INSTANCE_LABEL]: instance };
  return {
    serviceId,
    network: prefix,
    bridge: serviceBridge(serviceId),
    volume: (name) => `${prefix}-${name}`,
    container: (name) => `${prefix}-${name}`,
    labels,
    selector: { [SERVICE_LABEL]: serviceId },
    containerLabels: (deploymentId, component, setSize) => ({
      ...labels,
      [DEPLOYMENT_LABEL]: deploymentId,
      [COMPONENT_LABEL]: component,
      [SET_SIZE_LABEL]: String(setSize),
    }),
  };
}

export function containerSpec(
  container: PlanContainer,
  objects: ServiceObjects,
  deploymentId: string,
  setSize: number,
): ContainerSpec {
  return {
    name: objects.container(container.name),
    image: container.image,
    ...(container.command ? { command: container.command } : {}),
    ...(container.entrypoint ? { entrypoint: container.entrypoint } : {}),
    env: Object.entries(container.environment).map(([key, value]) => `${key}=${value}`),
    ...(container.workingDir ? { workingDir: container.workingDir } : {}),
    ...(container.user ? { user: container.user } : {}),
    ...(container.hostname ? { hostname: container.hostname } : {}),
    // Platform labels last: a tenant label can never override them (the parser also refuses the prefix).
    labels: { ...container.labels, ...objects.containerLabels(deploymentId, container.name, setSize) },
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
    network: objects.network,
    aliases: [container.name],
  };
}
