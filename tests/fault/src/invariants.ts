import type { Db } from '@hostctl/db';
import type { Workloads } from './workloads.js';

/**
 * What must hold whatever was killed: checked continuously while faults are injected (container
 * sets) and once at the end (final states, cleanup). Everything is found by this installation's
 * label, so other suites' objects on the same engine are never counted.
 */

export interface SetSample {
  /** Most distinct deployments seen at once among one service's containers. */
  maxSetsPerService: number;
  /** Most containers seen at once for one service component (a standby's aside). */
  maxContainersPerComponent: number;
  /** Swarm: most standby tasks seen at once for one service (one at most, during a release). */
  maxStandbysPerService: number;
  samples: number;
  violations: string[];
}

/** Samples every `everyMs` until stopped; an unreachable engine (a restart) skips a sample. */
export function sampleContainerSets(workloads: Workloads, instance: string, everyMs = 300) {
  const result: SetSample = {
    maxSetsPerService: 0,
    maxContainersPerComponent: 0,
    maxStandbysPerService: 0,
    samples: 0,
    violations: [],
  };
  let isStopped = false;
  const loop = (async () => {
    while (!isStopped) {
      try {
        const sets = new Map<string, Set<string>>();
        const components = new Map<string, number>();
        const standbys = new Map<string, number>();
        for (const unit of await workloads.units({ instance })) {
          if (unit.standby) {
            standbys.set(unit.service, (standbys.get(unit.service) ?? 0) + 1);
            continue;
          }
          const deployments = sets.get(unit.service) ?? new Set<string>();
          deployments.add(unit.deployment);
          sets.set(unit.service, deployments);
          const key = `${unit.service}/${unit.component}`;
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
        for (const count of standbys.values())
          result.maxStandbysPerService = Math.max(result.maxStandbysPerService, count);
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
export async function findOwnedLeftovers(workloads: Workloads, db: Db, instance: string): Promise<string[]> {
  const objects = await workloads.ownedObjects(instance);
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

/**
 * Swarm: the services that still have a standby task once `withinMs` passed; [] when none is
 * left. Every deployment has ended by then: its job removed its standby, or the reconciler did.
 */
export async function waitForNoStandby(
  workloads: Workloads,
  instance: string,
  withinMs: number,
): Promise<string[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const held = (await workloads.units({ instance }))
      .filter((unit) => unit.standby)
      .map((unit) => unit.service);
    if (held.length === 0 || Date.now() > deadline) return [...new Set(held)];
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
