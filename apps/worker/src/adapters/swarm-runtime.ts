import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import { DEPLOYMENT_LABEL, DomainError } from '@hostctl/domain';
import type { PlanContainer } from '@hostctl/compose';
import { PermanentStepError } from '../pipeline/step-errors.js';
import { createDockerClient, objectSegment } from './docker-client.js';
import { fail, ignoreStatus, statusOf } from './docker-errors.js';
import type { DeployLog } from '../pipeline/deploy-log.js';
import type { RegistryAuth } from './registry-auth.js';
import type { Labels } from './runtime.js';
import {
  endpointsOf,
  type ComponentObservation,
  type Release,
  type ServiceRuntime,
} from '../runtime/driver.js';
import { swarmNames, swarmServiceSpec, swarmWarnings, type SwarmNames } from './swarm-spec.js';
import { updateSwarmService } from './swarm-update.js';
import {
  failedTaskId,
  isStandby,
  nodeInfoOf,
  observeComponent,
  rolloutOf,
  type Rollout,
  type SwarmNodeInfo,
  type SwarmService,
  type SwarmTask,
} from './swarm-tasks.js';

interface Written {
  outcome: 'created' | 'updated' | 'current';
  id: string;
}

export interface SwarmRuntimeOptions {
  /** The swarm manager engine's socket. */
  socketPath: string;
  instance: string;
  /** How long a release may take to run its replicas (after its image is pulled on the node). */
  timeoutMs: number;
  /**
   * Swarm's update monitor (RELEASE_STABILIZATION_MS + RELEASE_DRAIN_MS): a task failing within it
   * rolls the update back.
   */
  monitorMs: number;
  /** The platform registry's credentials, handed to Swarm with each service for its nodes' pulls. */
  registryAuth?: RegistryAuth;
  /** Placement constraints of every service (EGRESS_PLACEMENT under EGRESS_POLICY=enforce). */
  platformConstraints?: string[];
  /**
   * SWARM_OVERLAY_ENCRYPTION=on: overlays are created `encrypted` (IPsec between nodes), so a
   * frame on the wire between nodes can be neither read nor forged without the swarm's keys. An
   * existing network keeps what it was created with (Docker cannot change it in place).
   */
  encryptOverlays?: boolean;
  pollMs?: number;
}

/**
 * ServiceRuntime on a Docker Swarm manager through dockerode. Swarm keeps the previous definition
 * and rolls a failed update back by itself; this driver only writes specs and reads how Swarm
 * fared: UpdateStatus for updates (the CLI exits 0 after a rollback, the status does not lie) and
 * the tasks' states and errors for everything else.
 */
export function createSwarmRuntime(options: SwarmRuntimeOptions): ServiceRuntime {
  const docker = createDockerClient(options.socketPath);
  const pollMs = options.pollMs ?? 500;
  const labelFilter = (labels: Labels) => ({
    label: Object.entries(labels).map(([key, value]) => `${key}=${value}`),
  });
  const servicesOf = (names: SwarmNames) =>
    docker.listServices({ filters: labelFilter(names.selector) }).catch(fail('cannot list Swarm services'));
  const tasksOf = async (serviceName: string): Promise<SwarmTask[]> =>
    (await docker
      .listTasks({ filters: { service: [serviceName] } })
      .catch(fail(`cannot list the tasks of ${serviceName}`))) as SwarmTask[];

  /** A stateful service stays on the node its volumes are on; a new one starts on this manager. */
  async function volumeNode(existing: Docker.Service[]): Promise<string> {
    for (const service of existing) {
      const constraint =
        service.Spec?.TaskTemplate && 'ContainerSpec' in service.Spec.TaskTemplate
          ? service.Spec.TaskTemplate.Placement?.Constraints?.find((item) => item.startsWith('node.id=='))
          : undefined;
      if (constraint) return constraint.slice('node.id=='.length);
    }
    const info = (await docker.info().catch(fail('cannot read the swarm manager'))) as {
      Swarm?: { NodeID?: string };
    };
    if (!info.Swarm?.NodeID) throw new DomainError('runtime_error', 'the engine is not part of a swarm');
    return info.Swarm.NodeID;
  }

  /** Creates or updates one component; a stale version ("update out of sequence", 500) is read again. */
  async function apply(spec: Docker.ServiceSpec, release: Release): Promise<Written> {
    const [current] = (await docker.listServices({ filters: { name: [spec.Name!] } })).filter(
      (service) => service.Spec?.Name === spec.Name,
    );
    if (!current) {
      const created = (await (
        options.registryAuth ? docker.createService(options.registryAuth, spec) : docker.createService(spec)
      ).catch(fail(`cannot create Swarm service ${spec.Name}`))) as { id?: string; ID?: string };
      return { outcome: 'created', id: created.id ?? created.ID ?? spec.Name! };
    }
    // A retried job finds its own release already written: watch it rather than update again.
    if (current.Spec?.Labels?.[DEPLOYMENT_LABEL] === release.deploymentId)
      return { outcome: 'current', id: current.ID };
    await updateSwarmService(
      docker,
      current.ID,
      () => spec,
      `update Swarm service ${spec.Name}`,
      options.registryAuth,
    );
    return { outcome: 'updated', id: current.ID };
  }

  /** Polls until the component runs its replicas of this release; throws what Swarm reported otherwise. */
  async function awaitRollout(
    container: PlanContainer,
    release: Release,
    name: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const deadline = Date.now() + options.timeoutMs + options.monitorMs;
    let last: Rollout = { kind: 'pending', detail: 'no task yet' };
    while (Date.now() < deadline) {
      signal?.throwIfAborted();
      const service = (await docker
        .getService(objectSegment(name, 'service'))
        .inspect()
        .catch(fail(`cannot inspect ${name}`))) as SwarmService;
      last = rolloutOf(
        service,
        await withNamedTask(service, await tasksOf(name)),
        release.deploymentId,
        container,
      );
      if (last.kind === 'done') return;
      if (last.kind === 'image_unavailable')
        throw new DomainError('image_unavailable', `${container.name}: ${last.detail}`);
      if (last.kind === 'failed') throw new PermanentStepError(`${container.name}: ${last.detail}`);
      await sleep(pollMs);
    }
    throw new PermanentStepError(
      `${container.name} did not run its replicas within ${options.timeoutMs + options.monitorMs} ms: ${last.detail}`,
    );
  }

  return {
    warnings: swarmWarnings,

    async up(release, log, signal) {
      const names = swarmNames(release.serviceId, options.instance);
      // The pipeline records and logs them when it prepares the plan (warnings()).
      const warnings = swarmWarnings(release.plan);
      await ensureOverlay(docker, names, options.encryptOverlays);
      await log.info(`Overlay network ${names.network} ready`);
      // The standby is no component of any plan: never updated, nor removed as one the plan dropped.
      const existing = (await servicesOf(names)).filter((service) => !isStandby(service));
      const pinned = release.plan.volumes.length > 0 ? await volumeNode(existing) : undefined;
      const written: Written[] = [];
      for (const container of release.plan.containers) {
        const spec = swarmServiceSpec(container, release, {
          names,
          monitorMs: options.monitorMs,
          ...(pinned ? { volumeNode: pinned } : {}),
          ...(options.platformConstraints ? { platformConstraints: options.platformConstraints } : {}),
        });
        const applied = await apply(spec, release);
        written.push(applied);
        await log.info(
          `Swarm service ${spec.Name} ${applied.outcome} (${container.replicas ?? 1} replica(s) of ${container.image})`,
        );
      }
      try {
        for (const container of release.plan.containers) {
          await awaitRollout(container, release, names.service(container.name), signal);
          await log.info(`${container.name} runs ${container.replicas ?? 1} replica(s) of this release`);
        }
      } catch (error) {
        // Cancelled or timed out: Swarm would finish the update by itself and run a release the
        // deployment says it does not. Undo what this call wrote, then report.
        if (signal?.aborted) await undo(written, log);
        throw error;
      }
      // Components the new plan no longer has go once the new release runs.
      const wanted = new Set(release.plan.containers.map((container) => names.service(container.name)));
      for (const service of existing)
        if (!wanted.has(service.Spec?.Name ?? '')) {
          await docker
            .getService(service.ID)
            .remove()
            .catch(ignoreStatus(404, fail(`cannot remove ${service.Spec?.Name}`)));
          await log.info(`Removed Swarm service ${service.Spec?.Name} (no longer in the plan)`);
        }
      return { warnings };
    },

    observe,

    async webEndpoints(release) {
      const web = release.plan.web;
      if (!web) return [];
      const components = await observe(release.serviceId);
      return endpointsOf(components, web.container, release.deploymentId);
    },

    async tearDown(serviceId) {
      const names = swarmNames(serviceId, options.instance);
      for (const service of await servicesOf(names))
        await docker
          .getService(service.ID)
          .remove()
          .catch(ignoreStatus(404, fail(`cannot remove ${service.Spec?.Name}`)));
      // Task containers go asynchronously; the network and volumes can only go after them.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const left = await leftovers(names);
        if (left.length === 0) return;
        if (Date.now() > deadline)
          throw new DomainError('runtime_error', `could not remove ${left.join(', ')} of the service yet`);
        await sleep(pollMs);
      }
    },
  };

  async function observe(serviceId: string): Promise<ComponentObservation[]> {
    const names = swarmNames(serviceId, options.instance);
    const observed: ComponentObservation[] = [];
    for (const service of await servicesOf(names))
      observed.push(
        observeComponent(service, await tasksOf(service.Spec?.Name ?? service.ID), await nodeInfo()),
      );
    return observed.sort((a, b) => a.component.localeCompare(b.component));
  }

  /** Rolls updated services back to their previous spec (and waits), removes created ones. */
  async function undo(written: Written[], log: DeployLog): Promise<void> {
    for (const { outcome, id } of written) {
      const service = docker.getService(id);
      if (outcome === 'created') {
        await service.remove().catch(ignoreStatus(404, fail(`cannot remove Swarm service ${id}`)));
        continue;
      }
      const current = (await service.inspect().catch(fail(`cannot inspect ${id}`))) as Docker.Service;
      // Already back (Swarm rolled a failure back itself) or never changed: nothing to undo.
      if (outcome !== 'updated' || current.UpdateStatus?.State?.startsWith('rollback')) continue;
      await updateSwarmService(
        docker,
        id,
        (now) => ({ ...now.Spec, rollback: 'previous' }),
        `roll ${current.Spec?.Name} back`,
      );
      await log.info(`Rolling ${current.Spec?.Name} back to the previous release (the deployment stopped)`);
    }
    const deadline = Date.now() + options.timeoutMs;
    for (const { outcome, id } of written) {
      if (outcome !== 'updated') continue;
      while (Date.now() < deadline) {
        const state = ((await docker.getService(id).inspect()) as Docker.Service).UpdateStatus?.State;
        if (state === 'rollback_completed' || state === 'rollback_paused') break;
        await sleep(pollMs);
      }
    }
  }

  /**
   * The task a failed update names ("… early termination of task <id>") may already be pruned from
   * the service's task list; read it by id so its error (a node that cannot pull) is not lost.
   */
  async function withNamedTask(service: SwarmService, tasks: SwarmTask[]): Promise<SwarmTask[]> {
    const id = failedTaskId(service.UpdateStatus?.Message);
    if (!id || tasks.some((task) => task.ID === id)) return tasks;
    const named = (await docker
      .getTask(id)
      .inspect()
      .catch(() => undefined)) as SwarmTask | undefined;
    return named ? [...tasks, named] : tasks;
  }

  async function nodeInfo(): Promise<Map<string, SwarmNodeInfo>> {
    const nodes = (await docker.listNodes().catch(fail('cannot list Swarm nodes'))) as Parameters<
      typeof nodeInfoOf
    >[0][];
    return new Map(nodes.map((node) => [node.ID, nodeInfoOf(node)]));
  }

  /** Removes the service's networks and volumes; names what is still in use. */
  async function leftovers(names: SwarmNames): Promise<string[]> {
    const left: string[] = [];
    // Swarm removes its tasks' containers, except one whose task it lost track of (its engine
    // restarted meanwhile: seen in the fault suite); with the services gone, none is wanted.
    const containers = await docker
      .listContainers({ all: true, filters: labelFilter(names.selector) })
      .catch(fail('cannot list containers'));
    for (const container of containers)
      await docker
        .getContainer(container.Id)
        .remove({ force: true })
        .catch((error: unknown) => {
          if (statusOf(error) !== 404) left.push(`container ${container.Names[0] ?? container.Id}`);
        });
    const networks = await docker
      .listNetworks({ filters: labelFilter(names.selector) })
      .catch(fail('cannot list networks'));
    for (const network of networks)
      await docker
        .getNetwork(network.Id)
        .remove()
        .catch((error: unknown) => {
          if (statusOf(error) !== 404) left.push(`network ${network.Name}`);
        });
    const volumes = await docker
      .listVolumes({ filters: labelFilter(names.selector) })
      .catch(fail('cannot list volumes'));
    for (const volume of volumes.Volumes ?? [])
      await docker
        .getVolume(volume.Name)
        .remove()
        .catch((error: unknown) => {
          if (statusOf(error) !== 404) left.push(`volume ${volume.Name}`);
        });
    // The manager accepts the removal of a network its tasks' containers still hold and deletes it
    // once they are gone: done only when it is no longer listed.
    for (const network of await docker
      .listNetworks({ filters: labelFilter(names.selector) })
      .catch(fail('cannot list networks')))
      if (!left.includes(`network ${network.Name}`)) left.push(`network ${network.Name}`);
    return left;
  }
}

/** The service's overlay network, created when missing (its components and its runs' jobs join it). */
export async function ensureOverlay(
  docker: Docker,
  names: SwarmNames,
  encrypt: boolean | undefined,
): Promise<void> {
  const existing = await docker
    .listNetworks({ filters: { name: [names.network] } })
    .catch(fail('cannot list networks'));
  if (existing.some((network) => network.Name === names.network)) return;
  await docker
    .createNetwork({
      Name: names.network,
      Driver: 'overlay',
      Labels: names.labels,
      CheckDuplicate: true,
      ...(encrypt ? { Options: { encrypted: '' } } : {}),
    })
    .catch(ignoreStatus(409, fail(`cannot create network ${names.network}`)));
}
