import { DEPLOYMENT_LABEL, OWNER_LABEL } from '@hostctl/domain';
import { startOrder, type Plan, type PlanContainer } from '@hostctl/compose';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { DeployLog } from './deploy-log.js';
import { waitReady, type ReadinessOptions } from './readiness.js';
import { containerSpec, type ServiceObjects } from './service-objects.js';
import { PermanentStepError } from './step-errors.js';

/**
 * Container steps, each idempotent: look up by name before creating, so a retried job reuses the
 * containers its earlier attempt created for the same deployment and replaces everything else.
 */
const STOP_TIMEOUT_S = 10;

/** Stops and removes every container of the service that belongs to another deployment. */
export async function removeOtherDeployments(
  runtime: Pick<ContainerRuntime, 'listContainers' | 'stopContainer' | 'removeContainer'>,
  objects: ServiceObjects,
  deploymentId: string,
  log: DeployLog,
): Promise<void> {
  for (const found of await runtime.listContainers(objects.selector)) {
    if (found.labels[DEPLOYMENT_LABEL] === deploymentId) continue;
    await log.info(`Removing previous container ${found.name}`);
    if (found.state === 'running') await runtime.stopContainer(found.id, STOP_TIMEOUT_S);
    await runtime.removeContainer(found.id);
  }
}

/** Ensures the network and the named volumes exist, labelled as the service's. */
export async function ensureNetworkAndVolumes(
  runtime: Pick<ContainerRuntime, 'ensureNetwork' | 'ensureVolume'>,
  plan: Plan,
  objects: ServiceObjects,
  log: DeployLog,
  onStep: (step: 'network' | 'volumes') => Promise<void>,
): Promise<void> {
  await onStep('network');
  await runtime.ensureNetwork(objects.network, objects.labels, { bridge: objects.bridge });
  await log.info(`Network ${objects.network} ready`);
  await onStep('volumes');
  for (const volume of plan.volumes) {
    await runtime.ensureVolume(objects.volume(volume), objects.labels);
    await log.info(`Volume ${objects.volume(volume)} ready`);
  }
}

export async function createContainers(
  runtime: Pick<ContainerRuntime, 'inspectContainer' | 'createContainer' | 'removeContainer'>,
  plan: Plan,
  objects: ServiceObjects,
  deploymentId: string,
  log: DeployLog,
): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const container of plan.containers) {
    const name = objects.container(container.name);
    const existing = await runtime.inspectContainer(name);
    if (existing && existing.labels[OWNER_LABEL] !== 'true') {
      // Never touch what we do not own, even when it squats on our name.
      throw new PermanentStepError(
        `a container named ${name} exists and is not managed by hostctl; remove or rename it`,
      );
    }
    if (existing?.labels[DEPLOYMENT_LABEL] === deploymentId) {
      ids.set(container.name, existing.id);
      await log.info(`Reusing container ${name}`);
      continue;
    }
    if (existing) await runtime.removeContainer(existing.id);
    ids.set(
      container.name,
      await runtime.createContainer(containerSpec(container, objects, deploymentId, plan.containers.length)),
    );
    await log.info(`Created container ${name} from ${container.image}`);
  }
  return ids;
}

/**
 * Starts containers in dependency order; a container that others depend on must be ready (healthy
 * when it has a check) before they start, which is compose's service_healthy behaviour.
 */
export async function startContainers(
  runtime: Pick<ContainerRuntime, 'startContainer' | 'inspectContainer' | 'containerLogs'>,
  plan: Plan,
  ids: Map<string, string>,
  log: DeployLog,
  readiness: ReadinessOptions,
): Promise<void> {
  const needed = new Set(plan.containers.flatMap((container) => container.dependsOn));
  for (const container of startOrder(plan)) {
    const id = idOf(ids, container);
    await runtime.startContainer(id);
    await log.info(`Started ${container.name}`);
    if (needed.has(container.name)) {
      await waitReady(runtime, id, container, readiness);
      await log.info(`${container.name} is ready`);
    }
  }
}

/** Waits for every container; returns the address of the web container when there is one. */
export async function verifyContainers(
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

function idOf(ids: Map<string, string>, container: PlanContainer): string {
  const id = ids.get(container.name);
  if (!id) throw new Error(`no container was created for ${container.name}`);
  return id;
}
