import { COMPONENT_LABEL, INSTANCE_LABEL, OWNER_LABEL, SERVICE_LABEL, SET_SIZE_LABEL } from '@hostctl/domain';
import type { Plan } from '@hostctl/compose';
import { serviceObjects } from '../../pipeline/service-objects.js';
import { restoreRelease, type ReleaseDeps } from '../../release/release-engine.js';
import type { RestoreTarget } from '../driver.js';

const quietLog = { info: async () => {}, error: async () => {} };

/**
 * The single engine's half of the reconciler's restore (service-restorer.ts): one listing of the
 * installation's containers instead of one lock and one listing per service: only services with
 * no container, one that is not running, or fewer containers than their deployment has (its
 * set-size label), are examined under their lock; the release engine brings the current
 * release's set back the way a deploy makes it.
 */
export function dockerRestoreTarget(release: ReleaseDeps): RestoreTarget {
  return {
    suspects: (running) => engineSuspects(release, running),
    problem: (serviceId, currentRelease, plan) => findProblem(release, serviceId, currentRelease, plan),
    restore: (service, plan, deploymentId) =>
      restoreRelease(release, { service, deploymentId, plan, log: quietLog }),
  };
}

async function engineSuspects(release: ReleaseDeps, running: string[]): Promise<string[]> {
  const containers = await release.runtime.listContainers({
    [OWNER_LABEL]: 'true',
    [INSTANCE_LABEL]: release.instance,
  });
  const sets = new Map<string, { allUp: boolean; count: number; expected: number }>();
  for (const container of containers) {
    const serviceId = container.labels[SERVICE_LABEL];
    if (!serviceId) continue;
    const set = sets.get(serviceId) ?? { allUp: true, count: 0, expected: 0 };
    set.allUp &&= container.state === 'running' || container.state === 'restarting';
    set.count += 1;
    // Containers made before the label existed have none: 0 expects nothing.
    set.expected = Math.max(set.expected, Number(container.labels[SET_SIZE_LABEL] ?? 0) || 0);
    sets.set(serviceId, set);
  }
  return running.filter((serviceId) => {
    const set = sets.get(serviceId);
    return !set || !set.allUp || set.count < set.expected;
  });
}

/** Why the current release's set is not running as planned, or undefined when it is. */
async function findProblem(
  release: ReleaseDeps,
  serviceId: string,
  currentRelease: string | undefined,
  plan: Plan | undefined,
): Promise<string | undefined> {
  const { runtime } = release;
  const objects = serviceObjects(serviceId, release.instance);
  // Only the current release's set: another one is a leftover for the reconciler, not the service.
  const containers = await runtime.listContainers(
    currentRelease ? objects.set(currentRelease).selector : objects.selector,
  );
  if (containers.length === 0) return 'its containers are missing';
  for (const container of containers) {
    if (container.state === 'running' || container.state === 'restarting') continue;
    const state = await runtime.inspectContainer(container.id);
    if (!state || state.isRunning || state.isRestarting) continue;
    const component = container.labels[COMPONENT_LABEL] ?? container.name;
    return state.status === 'created'
      ? `container ${component} was never started`
      : `container ${component} exited with code ${state.exitCode}`;
  }
  const present = new Set(containers.map((container) => container.labels[COMPONENT_LABEL]));
  const missing = plan?.containers.find((container) => !present.has(container.name));
  return missing ? `container ${missing.name} is missing` : undefined;
}
