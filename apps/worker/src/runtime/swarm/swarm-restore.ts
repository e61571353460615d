import type { SwarmRestarts } from '../../adapters/swarm-restarts.js';
import type { RestoreTarget } from '../driver.js';

/**
 * RUNTIME=swarm's half of the reconciler's restore (service-restorer.ts): Swarm replaces the tasks
 * its restart policies cover; the components it will not start again get a forced update (new
 * tasks, same release), under the same budget and events as the single engine's restore.
 */
export function swarmRestoreTarget(restarts: SwarmRestarts): RestoreTarget {
  const describe = (components: string[]) =>
    `component(s) ${components.join(', ')} stopped and Swarm's restart policy does not start them again`;
  return {
    async suspects(running) {
      const stopped = await restarts.stopped();
      return running.filter((serviceId) => stopped.has(serviceId));
    },
    async problem(serviceId) {
      const components = (await restarts.stopped(serviceId)).get(serviceId);
      return components ? describe(components) : undefined;
    },
    async restore(service) {
      const components = (await restarts.stopped(service.id)).get(service.id) ?? [];
      await restarts.restart(service.id, components);
    },
  };
}
