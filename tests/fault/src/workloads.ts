import Docker from 'dockerode';
import {
  COMPONENT_LABEL,
  DEPLOYMENT_LABEL,
  INSTANCE_LABEL,
  SERVICE_LABEL,
  STANDBY_LABEL,
} from '@hostctl/domain';
import { DEV_ENGINE, SWARM_ENGINE, restartDockerEngine } from './docker-engine.js';
import { DOCKER_SOCKET, FAULT_RUNTIME, swarmSocketPath, type Runtime } from './fault-env.js';

/**
 * What the phases ask of the runtime under test, answered for the single engine (its containers)
 * and for Swarm (its services and tasks on the dev stack's single-node swarm engine), so every
 * phase and invariant reads the same whichever runtime the workers drive.
 */
export interface Unit {
  /** The container's id (on Swarm, the task's container, on the swarm engine). */
  id: string;
  service: string;
  component: string;
  deployment: string;
  /** Docker's container state, or the task's state on Swarm. */
  state: string;
  /**
   * Swarm: a task of a standby, the serving release's web component held while Swarm updates it
   * (apps/worker/src/adapters/swarm-standby.ts). A copy kept by design, not a set of a release.
   */
  standby?: true;
}

export interface OwnedObject {
  what: string;
  service: string | undefined;
}

export type Scope = { instance: string } | { serviceId: string };

export interface Workloads {
  runtime: Runtime;
  /**
   * The units of an installation or a service: every container on the single engine (stopped
   * ones too: a set being drained counts), the tasks Swarm wants running on Swarm.
   */
  units(scope: Scope): Promise<Unit[]>;
  /** `docker rm -f` of the container of one of the service's running units; its id. */
  removeRunningUnit(serviceId: string): Promise<string | undefined>;
  /** Everything carrying the installation's label: containers, networks, volumes (and Swarm services, secrets, configs). */
  ownedObjects(instance: string): Promise<OwnedObject[]>;
  /** Best effort after a failed run: removes whatever carries the installation's label. */
  removeInstallation(instance: string): Promise<void>;
  /** What a person would look at first when the service does not run: its units' states and errors. */
  describe(serviceId: string): Promise<string>;
  /** Restarts the engine (FAULT_RESTART_DOCKER=1 only); how long it did not answer. */
  restartEngine(instance: string): Promise<{ downMs: number }>;
}

const filterOf = (scope: Scope) => ({
  label: [
    'instance' in scope ? `${INSTANCE_LABEL}=${scope.instance}` : `${SERVICE_LABEL}=${scope.serviceId}`,
  ],
});

const unitOf = (id: string, labels: Record<string, string> | undefined, state: string): Unit => ({
  id,
  service: labels?.[SERVICE_LABEL] ?? '?',
  component: labels?.[COMPONENT_LABEL] ?? '?',
  deployment: labels?.[DEPLOYMENT_LABEL] ?? '?',
  state,
  ...(labels?.[STANDBY_LABEL] === 'true' ? { standby: true as const } : {}),
});

/** Containers, networks and volumes of an engine carrying the installation's label. */
async function engineObjects(docker: Docker, instance: string): Promise<OwnedObject[]> {
  const filters = filterOf({ instance });
  const containers = await docker.listContainers({ all: true, filters });
  const networks = await docker.listNetworks({ filters });
  const volumes = (await docker.listVolumes({ filters })).Volumes ?? [];
  return [
    ...containers.map((c) => ({ what: `container ${c.Names[0] ?? c.Id}`, service: c.Labels[SERVICE_LABEL] })),
    ...networks.map((n) => ({ what: `network ${n.Name}`, service: n.Labels?.[SERVICE_LABEL] })),
    ...volumes.map((v) => ({ what: `volume ${v.Name}`, service: v.Labels?.[SERVICE_LABEL] })),
  ];
}

async function removeEngineObjects(docker: Docker, instance: string): Promise<void> {
  const filters = filterOf({ instance });
  for (const container of await docker.listContainers({ all: true, filters }))
    await docker
      .getContainer(container.Id)
      .remove({ force: true })
      .catch(() => undefined);
  for (const network of await docker.listNetworks({ filters }))
    await docker
      .getNetwork(network.Id)
      .remove()
      .catch(() => undefined);
  for (const volume of (await docker.listVolumes({ filters })).Volumes ?? [])
    await docker
      .getVolume(volume.Name)
      .remove()
      .catch(() => undefined);
}

function engineWorkloads(docker: Docker): Workloads {
  const units = async (scope: Scope) =>
    (await docker.listContainers({ all: true, filters: filterOf(scope) })).map((c) =>
      unitOf(c.Id, c.Labels, c.State),
    );
  return {
    runtime: 'docker',
    units,
    removeRunningUnit: (serviceId) => removeRunningContainer(docker, units, serviceId),
    async describe(serviceId) {
      const found = await docker.listContainers({ all: true, filters: filterOf({ serviceId }) });
      return found.map((c) => `${c.Names[0] ?? c.Id}: ${c.Status}`).join('; ') || 'no container';
    },
    ownedObjects: (instance) => engineObjects(docker, instance),
    removeInstallation: (instance) => removeEngineObjects(docker, instance),
    async restartEngine(instance) {
      return restartDockerEngine(docker, DEV_ENGINE, await unprotectedPids(docker, instance));
    },
  };
}

/** `docker rm -f` of a running unit's container on `engine`; its id. */
async function removeRunningContainer(
  engine: Docker,
  units: (scope: Scope) => Promise<Unit[]>,
  serviceId: string,
): Promise<string | undefined> {
  const running = (await units({ serviceId })).find((unit) => unit.state === 'running' && !unit.standby);
  if (running) await engine.getContainer(running.id).remove({ force: true });
  return running?.id;
}

/** Main processes of the installation's running containers that no restart policy brings back. */
async function unprotectedPids(docker: Docker, instance: string): Promise<number[]> {
  const containers = await docker.listContainers({ filters: filterOf({ instance }) });
  const pids: number[] = [];
  for (const summary of containers) {
    const info = await docker.getContainer(summary.Id).inspect();
    const policy = info.HostConfig.RestartPolicy?.Name ?? '';
    if ((policy === '' || policy === 'no') && info.State.Pid > 0) pids.push(info.State.Pid);
  }
  return pids;
}

interface TaskSummary {
  ID: string;
  Spec?: { ContainerSpec?: { Labels?: Record<string, string> } };
  Status?: { State?: string; ContainerStatus?: { ContainerID?: string } };
}

interface LabelledSwarmObject {
  ID: string;
  Spec?: { Name?: string; Labels?: Record<string, string> };
}

/**
 * The swarm has one node here, the swarm engine itself, so a task's container is on the engine the
 * suite talks to; on a multi-node swarm it would be on the task's node.
 */
function swarmWorkloads(swarm: Docker): Workloads {
  const units = async (scope: Scope) => {
    const tasks = (await swarm.listTasks({
      filters: { ...filterOf(scope), 'desired-state': ['running'] },
    })) as TaskSummary[];
    return tasks.map((task) =>
      unitOf(
        task.Status?.ContainerStatus?.ContainerID ?? task.ID,
        task.Spec?.ContainerSpec?.Labels,
        task.Status?.State ?? '?',
      ),
    );
  };
  const swarmObjects = async (instance: string) => {
    const filters = filterOf({ instance });
    const services = (await swarm.listServices({ filters })) as LabelledSwarmObject[];
    const secrets = (await swarm.listSecrets({ filters })) as LabelledSwarmObject[];
    const configs = (await swarm.listConfigs({ filters })) as LabelledSwarmObject[];
    const describe = (kind: string) => (object: LabelledSwarmObject) => ({
      what: `${kind} ${object.Spec?.Name ?? object.ID}`,
      service: object.Spec?.Labels?.[SERVICE_LABEL],
    });
    return [
      ...services.map(describe('swarm service')),
      ...secrets.map(describe('secret')),
      ...configs.map(describe('config')),
    ];
  };
  return {
    runtime: 'swarm',
    units,
    removeRunningUnit: (serviceId) => removeRunningContainer(swarm, units, serviceId),
    async describe(serviceId) {
      const services = (await swarm.listServices({
        filters: filterOf({ serviceId }),
      })) as (LabelledSwarmObject & {
        UpdateStatus?: { State?: string; Message?: string };
      })[];
      const tasks = (await swarm.listTasks({ filters: filterOf({ serviceId }) })) as (TaskSummary & {
        DesiredState?: string;
        Status?: { Err?: string };
      })[];
      const update = services.map(
        (s) => `${s.Spec?.Name}: update ${s.UpdateStatus?.State ?? 'none'} ${s.UpdateStatus?.Message ?? ''}`,
      );
      const states = tasks.map(
        (task) =>
          `task ${task.ID.slice(0, 8)} ${task.Status?.State}/${task.DesiredState} ${task.Status?.Err ?? ''}`,
      );
      return [...update, ...states].join('; ') || 'no Swarm service';
    },
    async ownedObjects(instance) {
      return [...(await swarmObjects(instance)), ...(await engineObjects(swarm, instance))];
    },
    async removeInstallation(instance) {
      for (const service of (await swarm.listServices({
        filters: filterOf({ instance }),
      })) as LabelledSwarmObject[])
        await swarm
          .getService(service.ID)
          .remove()
          .catch(() => undefined);
      await removeEngineObjects(swarm, instance);
    },
    restartEngine: () => restartDockerEngine(swarm, SWARM_ENGINE),
  };
}

export function workloadsFor(runtime: Runtime = FAULT_RUNTIME): Workloads {
  if (runtime === 'docker') return engineWorkloads(new Docker({ socketPath: DOCKER_SOCKET }));
  return swarmWorkloads(new Docker({ socketPath: swarmSocketPath() }));
}

/** Units grouped by deployment: one set per release (a standby is none). */
export function setsOf(units: Unit[]): Map<string, Unit[]> {
  const sets = new Map<string, Unit[]>();
  for (const unit of units.filter((item) => !item.standby))
    sets.set(unit.deployment, [...(sets.get(unit.deployment) ?? []), unit]);
  return sets;
}
