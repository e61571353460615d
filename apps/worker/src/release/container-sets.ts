import { COMPONENT_LABEL, DEPLOYMENT_LABEL, OWNER_LABEL } from '@hostctl/domain';
import { startOrder, type Plan, type PlanContainer } from '@hostctl/compose';
import type { ContainerRuntime, ContainerSummary } from '../adapters/runtime.js';
import type { DeployLog } from '../pipeline/deploy-log.js';
import { waitReady, type ReadinessOptions } from '../pipeline/readiness.js';
import { containerSpec, type ServiceObjects, type SetObjects } from '../pipeline/service-objects.js';
import { PermanentStepError } from '../pipeline/step-errors.js';

/**
 * Steps on one container set (the containers of one deployment, on that deployment's network).
 * Each is idempotent: things are found by label before anything is created, so a retried job
 * continues with what an earlier attempt made.
 */
export const STOP_GRACE_S = 10;

/** The service's container sets, by deployment id (a container without the label is its own "set"). */
export async function listSets(
  runtime: Pick<ContainerRuntime, 'listContainers'>,
  objects: ServiceObjects,
): Promise<Map<string, ContainerSummary[]>> {
  const sets = new Map<string, ContainerSummary[]>();
  for (const container of await runtime.listContainers(objects.selector)) {
    const key = container.labels[DEPLOYMENT_LABEL] ?? `unlabelled:${container.id}`;
    sets.set(key, [...(sets.get(key) ?? []), container]);
  }
  return sets;
}

export async function ensureSetNetwork(
  runtime: Pick<ContainerRuntime, 'ensureNetwork'>,
  set: SetObjects,
  log: DeployLog,
): Promise<void> {
  await runtime.ensureNetwork(set.network, set.networkLabels, { bridge: set.bridge });
  await log.info(`Network ${set.network} ready`);
}

export async function ensureVolumes(
  runtime: Pick<ContainerRuntime, 'ensureVolume'>,
  plan: Plan,
  objects: ServiceObjects,
  log: DeployLog,
): Promise<void> {
  for (const volume of plan.volumes) {
    await runtime.ensureVolume(objects.volume(volume), objects.labels);
    await log.info(`Volume ${objects.volume(volume)} ready`);
  }
}

/** Creates the set's missing containers; returns component → container id. */
export async function createSet(
  runtime: Pick<ContainerRuntime, 'listContainers' | 'inspectContainer' | 'createContainer'>,
  plan: Plan,
  objects: ServiceObjects,
  set: SetObjects,
  log: DeployLog,
): Promise<Map<string, string>> {
  const existing = await setContainerIds(runtime, set);
  const ids = new Map<string, string>();
  for (const container of plan.containers) {
    const reused = existing.get(container.name);
    if (reused) {
      ids.set(container.name, reused);
      await log.info(`Reusing container ${set.container(container.name)}`);
      continue;
    }
    const name = set.container(container.name);
    const squatter = await runtime.inspectContainer(name);
    if (squatter) {
      // Never touch what we do not own, even when it squats on our name.
      throw new PermanentStepError(
        squatter.labels[OWNER_LABEL] === 'true'
          ? `a container named ${name} exists for another deployment; the reconciler removes it`
          : `a container named ${name} exists and is not managed by hostctl; remove or rename it`,
      );
    }
    ids.set(
      container.name,
      await runtime.createContainer(containerSpec(container, objects, set, plan.containers.length)),
    );
    await log.info(`Created container ${name} from ${container.image}`);
  }
  return ids;
}

/** component → id of the set's containers that exist (a resumed release watches these). */
export async function setContainerIds(
  runtime: Pick<ContainerRuntime, 'listContainers'>,
  set: SetObjects,
): Promise<Map<string, string>> {
  const found = await runtime.listContainers(set.selector);
  return new Map(
    found.flatMap((container) => {
      const component = container.labels[COMPONENT_LABEL];
      return component ? [[component, container.id] as const] : [];
    }),
  );
}

/**
 * Starts the set in dependency order; a container others depend on must be ready (healthy when it
 * has a check) before they start, which is compose's service_healthy behaviour. A container that
 * is already running is left as it is (a resumed job, or a restore of a partly running set).
 */
export async function startSet(
  runtime: Pick<ContainerRuntime, 'startContainer' | 'inspectContainer' | 'containerLogs'>,
  plan: Plan,
  ids: Map<string, string>,
  log: DeployLog,
  readiness: ReadinessOptions,
): Promise<void> {
  const needed = new Set(plan.containers.flatMap((container) => container.dependsOn));
  for (const container of startOrder(plan)) {
    const id = idOf(ids, container);
    if ((await runtime.inspectContainer(id))?.isRunning) continue;
    await runtime.startContainer(id);
    await log.info(`Started ${container.name}`);
    if (needed.has(container.name)) {
      await waitReady(runtime, id, container, readiness);
      await log.info(`${container.name} is ready`);
    }
  }
}

/** Waits until every container is ready; returns the address of the web container when there is one. */
export async function verifySet(
  runtime: Pick<ContainerRuntime, 'inspectContainer' | 'containerLogs'>,
  plan: Plan,
  ids: Map<string, string>,
  log: DeployLog,
  readiness: ReadinessOptions,
): Promise<{ webIp?: string }> {
  let webIp: string | undefined;
  for (const container of startOrder(plan)) {
    const ready = await waitReady(runtime, idOf(ids, container), container, readiness);
    if (plan.web?.container === container.name) webIp = ready.ip;
    await log.info(`${container.name} is ready`);
  }
  return webIp ? { webIp } : {};
}

/** The address of a set's web container when it is running (where traffic can go back to). */
export async function webAddress(
  runtime: Pick<ContainerRuntime, 'listContainers' | 'inspectContainer'>,
  set: SetObjects,
  web: Plan['web'],
): Promise<string | undefined> {
  if (!web) return undefined;
  const [container] = await runtime.listContainers({ ...set.selector, [COMPONENT_LABEL]: web.container });
  const state = container ? await runtime.inspectContainer(container.id) : null;
  return state?.isRunning ? state.ip : undefined;
}

/** Stops (does not remove) a set, dependents first: stop-first keeps it to start it again. */
export async function stopSet(
  runtime: Pick<ContainerRuntime, 'listContainers' | 'stopContainer'>,
  set: SetObjects,
  plan: Plan | undefined,
): Promise<void> {
  const containers = inStartOrder(await runtime.listContainers(set.selector), plan).reverse();
  for (const container of containers)
    if (container.state === 'running' || container.state === 'restarting')
      await runtime.stopContainer(container.id, STOP_GRACE_S);
}

/** Starts a stopped set again (stop-first failed: the previous release comes back). */
export async function restartSet(
  runtime: Pick<ContainerRuntime, 'listContainers' | 'startContainer' | 'inspectContainer' | 'containerLogs'>,
  set: SetObjects,
  plan: Plan | undefined,
  readiness: ReadinessOptions,
): Promise<void> {
  const containers = inStartOrder(await runtime.listContainers(set.selector), plan);
  for (const container of containers)
    if (container.state !== 'running') await runtime.startContainer(container.id);
  for (const container of containers) {
    const component = plan?.containers.find((item) => item.name === container.labels[COMPONENT_LABEL]);
    if (component) await waitReady(runtime, container.id, component, readiness);
  }
}

/**
 * Stops (with the stop grace, so requests in flight finish) and removes a set's containers, then
 * its network. Tolerates what is already gone, so a retried retire simply continues.
 */
export async function removeSet(
  runtime: Pick<
    ContainerRuntime,
    'listContainers' | 'stopContainer' | 'removeContainer' | 'listNetworks' | 'removeNetwork'
  >,
  set: Pick<SetObjects, 'selector'>,
  plan: Plan | undefined,
  graceful = true,
): Promise<void> {
  const containers = inStartOrder(await runtime.listContainers(set.selector), plan).reverse();
  for (const container of containers) {
    if (graceful && container.state === 'running') await runtime.stopContainer(container.id, STOP_GRACE_S);
    await runtime.removeContainer(container.id);
  }
  for (const network of await runtime.listNetworks(set.selector)) await runtime.removeNetwork(network.id);
}

/** Plan order when the plan is known; unknown components last, by name. */
export function inStartOrder(containers: ContainerSummary[], plan: Plan | undefined): ContainerSummary[] {
  const order = plan ? startOrder(plan).map((container) => container.name) : [];
  const rank = (container: ContainerSummary) => {
    const index = order.indexOf(container.labels[COMPONENT_LABEL] ?? '');
    return index < 0 ? order.length : index;
  };
  return [...containers].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
}

function idOf(ids: Map<string, string>, container: PlanContainer): string {
  const id = ids.get(container.name);
  if (!id) throw new Error(`no container was created for ${container.name}`);
  return id;
}

/** Removes every set of the service except the ones kept (and the networks of the removed ones). */
export async function removeStraySets(
  runtime: ContainerRuntime,
  objects: ServiceObjects,
  keep: (string | undefined)[],
  log: DeployLog,
): Promise<number> {
  let removed = 0;
  for (const [deploymentId, containers] of await listSets(runtime, objects)) {
    if (keep.includes(deploymentId)) continue;
    await log.info(`Removing the leftover container set of ${deploymentId}`);
    for (const container of containers) await runtime.removeContainer(container.id);
    removed += 1;
  }
  return removed;
}

/** Networks of the service that no kept set uses (a removed set's, or one made before sets had their own). */
export async function removeUnusedNetworks(
  runtime: ContainerRuntime,
  objects: ServiceObjects,
  keep: SetObjects,
) {
  for (const network of await runtime.listNetworks(objects.selector)) {
    if (network.name === keep.network) continue;
    // Still in use (a set the reconciler has not removed yet): the next retire or sweep takes it.
    await runtime.removeNetwork(network.id).catch(() => undefined);
  }
}

export async function isSetRunning(runtime: ContainerRuntime, set: SetObjects): Promise<boolean> {
  const containers = await runtime.listContainers(set.selector);
  return containers.length > 0 && containers.every((container) => container.state === 'running');
}
