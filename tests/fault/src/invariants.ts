import type Docker from 'dockerode';
import type { Db } from '@hostctl/db';
import { COMPONENT_LABEL, DEPLOYMENT_LABEL, INSTANCE_LABEL, SERVICE_LABEL } from '@hostctl/domain';

/**
 * What must hold whatever was killed: checked continuously while faults are injected (container
 * sets) and once at the end (final states, cleanup). Everything is found by this installation's
 * label, so other suites' objects on the same engine are never counted.
 */

export interface SetSample {
  /** Most distinct deployments seen at once among one service's containers. */
  maxSetsPerService: number;
  /** Most containers seen at once for one service component. */
  maxContainersPerComponent: number;
  samples: number;
  violations: string[];
}

/** Samples every `everyMs` until stopped; an unreachable engine (Docker restart) skips a sample. */
export function sampleContainerSets(docker: Docker, instance: string, everyMs = 300) {
  const result: SetSample = {
    maxSetsPerService: 0,
    maxContainersPerComponent: 0,
    samples: 0,
    violations: [],
  };
  let isStopped = false;
  const loop = (async () => {
    while (!isStopped) {
      try {
        const found = await docker.listContainers({
          all: true,
          filters: { label: [`${INSTANCE_LABEL}=${instance}`] },
        });
        const sets = new Map<string, Set<string>>();
        const components = new Map<string, number>();
        for (const container of found) {
          const service = container.Labels[SERVICE_LABEL] ?? '?';
          const deployments = sets.get(service) ?? new Set<string>();
          deployments.add(container.Labels[DEPLOYMENT_LABEL] ?? '?');
          sets.set(service, deployments);
          const key = `${service}/${container.Labels[COMPONENT_LABEL] ?? '?'}`;
          components.set(key, (components.get(key) ?? 0) + 1);
        }
        for (const [service, deployments] of sets) {
          result.maxSetsPerService = Math.max(result.maxSetsPerService, deployments.size);
          if (deployments.size > 2 && result.violations.length < 20)
            result.violations.push(
              `service ${service}: containers of ${[...deployments].join(', ')} at once`,
            );
        }
        for (const count of components.values())
          result.maxContainersPerComponent = Math.max(result.maxContainersPerComponent, count);
        result.samples += 1;
      } catch {
        // The engine is restarting: nothing to sample.
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    result,
    async stop(): Promise<SetSample> {
      isStopped = true;
      await loop;
      return result;
    },
  };
}

/** Owned objects whose service is unknown, purged or deleted: there must be none. */
export async function findOwnedLeftovers(docker: Docker, db: Db, instance: string): Promise<string[]> {
  const filters = { label: [`${INSTANCE_LABEL}=${instance}`] };
  const containers = await docker.listContainers({ all: true, filters });
  const networks = await docker.listNetworks({ filters });
  const volumes = (await docker.listVolumes({ filters })).Volumes ?? [];
  const objects = [
    ...containers.map((c) => ({ what: `container ${c.Names[0] ?? c.Id}`, service: c.Labels[SERVICE_LABEL] })),
    ...networks.map((n) => ({ what: `network ${n.Name}`, service: n.Labels?.[SERVICE_LABEL] })),
    ...volumes.map((v) => ({ what: `volume ${v.Name}`, service: v.Labels?.[SERVICE_LABEL] })),
  ];
  const ids = [...new Set(objects.map((object) => object.service).filter((id): id is string => Boolean(id)))];
  const live = new Set(
    (await db.service.findMany({ where: { id: { in: ids }, deletedAt: null }, select: { id: true } })).map(
      (row) => row.id,
    ),
  );
  return objects
    .filter((object) => !object.service || !live.has(object.service))
    .map((object) => object.what);
}

/** Containers of one service by state, e.g. { running: 1 }. */
export async function containerStates(docker: Docker, serviceId: string): Promise<Record<string, number>> {
  const found = await docker.listContainers({
    all: true,
    filters: { label: [`${SERVICE_LABEL}=${serviceId}`] },
  });
  const states: Record<string, number> = {};
  for (const container of found) states[container.State] = (states[container.State] ?? 0) + 1;
  return states;
}
