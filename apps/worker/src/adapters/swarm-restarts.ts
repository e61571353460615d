import type Docker from 'dockerode';
import { COMPONENT_LABEL, INSTANCE_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { fail } from './docker-errors.js';
import type { RegistryAuth } from './registry-auth.js';
import { updateSwarmService } from './swarm-update.js';
import { isReplacingTasks, isStandby, type SwarmService, type SwarmTask } from './swarm-tasks.js';

/**
 * Swarm replaces a failed task only as its restart policy says: with `restart: "no"` (condition
 * `none`) or an exhausted `on-failure`, a task killed by an engine restart or removed by hand stays
 * down, and the component runs fewer replicas than it should for good. The single engine's
 * reconciler restores such services from their release (service-restorer.ts); on Swarm the same
 * repair is a forced update, which makes Swarm start new tasks from the current spec.
 */
export interface SwarmRestarts {
  /**
   * Components running fewer tasks than their replicas that Swarm is not bringing back, by hostctl
   * service id (of the installation, or of one service).
   */
  stopped(serviceId?: string): Promise<Map<string, string[]>>;
  /** A new task for each of the service's components (`docker service update --force`). */
  restart(serviceId: string, components: string[]): Promise<void>;
}

/** Desired states of a task Swarm is running or about to run (`ready`: waiting out a restart delay). */
const WANTED = new Set(['running', 'ready']);

export function stoppedComponentsOf(
  services: SwarmService[],
  tasks: (SwarmTask & { ServiceID?: string })[],
): Map<string, string[]> {
  const wanted = new Map<string, number>();
  for (const task of tasks)
    if (task.ServiceID && WANTED.has(task.DesiredState ?? ''))
      wanted.set(task.ServiceID, (wanted.get(task.ServiceID) ?? 0) + 1);
  const stopped = new Map<string, string[]>();
  for (const service of services) {
    const labels = service.Spec?.Labels ?? {};
    const serviceId = labels[SERVICE_LABEL];
    const replicas = service.Spec?.Mode?.Replicated?.Replicas ?? 0;
    // Swarm replacing the tasks itself is not a component to repair, nor is a standby.
    if (!serviceId || replicas === 0 || isReplacingTasks(service) || isStandby(service)) continue;
    if ((wanted.get(service.ID) ?? 0) >= replicas) continue;
    const component = labels[COMPONENT_LABEL] ?? service.Spec?.Name ?? service.ID;
    stopped.set(serviceId, [...(stopped.get(serviceId) ?? []), component]);
  }
  return stopped;
}

/**
 * `registryAuth`: the worker's registry credentials, sent with each forced update, so a restored
 * task pulls with the current password rather than the one the service was last written with.
 */
export function createSwarmRestarts(
  docker: Docker,
  instance: string,
  registryAuth?: RegistryAuth,
): SwarmRestarts {
  const filters = (serviceId?: string) => ({
    label: [serviceId ? `${SERVICE_LABEL}=${serviceId}` : `${INSTANCE_LABEL}=${instance}`],
  });
  const servicesOf = (serviceId?: string) =>
    docker.listServices({ filters: filters(serviceId) }).catch(fail('cannot list Swarm services'));
  return {
    async stopped(serviceId) {
      const services = await servicesOf(serviceId);
      if (services.length === 0) return new Map();
      const tasks = (await docker
        .listTasks({ filters: filters(serviceId) })
        .catch(fail('cannot list Swarm tasks'))) as (SwarmTask & { ServiceID?: string })[];
      return stoppedComponentsOf(services, tasks);
    },
    async restart(serviceId, components) {
      for (const service of await servicesOf(serviceId)) {
        if (!components.includes(service.Spec?.Labels?.[COMPONENT_LABEL] ?? '')) continue;
        await updateSwarmService(
          docker,
          service.ID,
          (now) => ({
            ...now.Spec,
            TaskTemplate: {
              ...now.Spec?.TaskTemplate,
              ForceUpdate: (now.Spec?.TaskTemplate?.ForceUpdate ?? 0) + 1,
            },
          }),
          `restart Swarm service ${service.Spec?.Name}`,
          registryAuth,
        );
      }
    },
  };
}
