import { COMPONENT_LABEL, type LifecycleAction } from '@hostctl/domain';
import type { Plan, PlanContainer } from '@hostctl/compose';
import type { WorkerDeployment } from '@hostctl/db';
import type { ContainerSummary } from '../../adapters/runtime.js';
import { waitReady } from '../../pipeline/readiness.js';
import { serviceObjects } from '../../pipeline/service-objects.js';
import { PermanentStepError } from '../../pipeline/step-errors.js';
import { STOP_GRACE_S, inStartOrder } from '../../release/container-sets.js';
import { restoreRelease, type ReleaseDeps, type ServiceRef } from '../../release/release-engine.js';
import { storedPlan } from '../../release/release-images.js';

const quietLog = { info: async () => {}, error: async () => {} };

/**
 * start/stop/restart on the single engine: the current release's containers, in dependency order
 * (stopped in reverse). Containers removed behind our back are recreated by the release engine
 * the way a deploy makes them.
 */
export async function dockerLifecycle(
  release: ReleaseDeps,
  service: ServiceRef,
  action: LifecycleAction,
  last: WorkerDeployment | null,
): Promise<void> {
  const { runtime } = release;
  const objects = serviceObjects(service.id, release.instance);
  const plan = storedPlan(last);
  // Only the current release's set: another one is a leftover the reconciler removes.
  const found = await runtime.listContainers(last ? objects.set(last.id).selector : objects.selector);
  if (found.length === 0) {
    if (action === 'stop') return;
    if (!plan || !last)
      throw new PermanentStepError(
        'the service has no containers and no successful deployment to recreate them from; redeploy it',
      );
    // Containers removed behind our back: rebuild them from the last plan that worked.
    await restoreRelease(release, { service, deploymentId: last.id, plan, log: quietLog });
    return;
  }
  const ordered = inStartOrder(found, plan);
  if (action !== 'start') {
    for (const container of [...ordered].reverse()) await runtime.stopContainer(container.id, STOP_GRACE_S);
  }
  if (action !== 'stop') await startAll(release, plan, ordered);
}

async function startAll(release: ReleaseDeps, plan: Plan | undefined, containers: ContainerSummary[]) {
  const { runtime, readiness } = release;
  const ordered = inStartOrder(containers, plan);
  for (const container of ordered) await runtime.startContainer(container.id);
  for (const container of ordered) {
    const component = container.labels[COMPONENT_LABEL] ?? container.name;
    await waitReady(runtime, container.id, planContainer(plan, component), readiness);
  }
}

function planContainer(plan: Plan | undefined, component: string): PlanContainer {
  const known = plan?.containers.find((container) => container.name === component);
  return (
    known ?? {
      name: component,
      image: '',
      environment: {},
      labels: {},
      volumes: [],
      ports: [],
      dependsOn: [],
      restart: 'no',
      init: true,
      limits: {},
    }
  );
}
