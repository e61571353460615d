import Docker from 'dockerode';
import { DEPLOYMENT_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { eventually } from './client.js';
import { E2E_RUNTIME, runtimeEnv, type Runtime } from './env.js';

/**
 * What runs a service, asked the same way under either runtime, so a test states its promise once:
 * on the single engine (RUNTIME=docker) the service's containers on DOCKER_SOCKET's engine; under
 * Swarm its Swarm services and their tasks on the swarm engine (SWARM_DOCKER_HOST). Everything is
 * found by SERVICE_LABEL, as the worker labels it.
 */

/** A container of the service, or one of its Swarm tasks. */
interface Unit {
  /** The container's id, or the task's. */
  id: string;
  /** The release it runs (DEPLOYMENT_LABEL). */
  deploymentId: string;
  /** The container's state (running, exited, …), or the task's (starting, running, failed, …). */
  state: string;
  labels: Record<string, string>;
  /** `NAME=value`, as the process gets them. */
  env: string[];
  /**
   * `host:port` that reaches the unit's container port from this machine: the container's address
   * on its network on the single engine; under Swarm the port the task publishes in host mode on
   * its node (the only way in: overlay addresses are not routed to the host). Undefined: no way.
   */
  dial(port: number): string | undefined;
}

const singleEngine = new Docker({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' });
let swarm: Docker | undefined;

/** The swarm engine's client (made on first use: the e2e project never needs SWARM_DOCKER_HOST). */
function swarmEngine(): Docker {
  swarm ??= new Docker({ socketPath: runtimeEnv('swarm').SWARM_DOCKER_HOST!.replace(/^unix:\/\//, '') });
  return swarm;
}

const labelled = (serviceId: string) => ({ label: [`${SERVICE_LABEL}=${serviceId}`] });

/**
 * The service's units as it stands: every container (a stopped one too) on the single engine; under
 * Swarm the tasks Swarm wants running (`desired-state: running`), so the tasks of a replaced or
 * rolled-back release, which Swarm keeps as history, are not among them.
 */
export async function unitsOf(serviceId: string, runtime: Runtime = E2E_RUNTIME): Promise<Unit[]> {
  return runtime === 'swarm' ? swarmTasks(serviceId, true) : containers(serviceId);
}

/** The units running right now: under Swarm also a task Swarm is still shutting down. */
export async function runningUnitsOf(serviceId: string, runtime: Runtime = E2E_RUNTIME): Promise<Unit[]> {
  const units = runtime === 'swarm' ? await swarmTasks(serviceId, false) : await containers(serviceId);
  return units.filter((unit) => unit.state === 'running');
}

/** The page a unit serves on its container port (the service's own web server, not the proxy). */
export async function fetchFrom(unit: Unit | undefined, port = 8080): Promise<string> {
  const address = unit?.dial(port);
  if (!address) throw new Error(`no address reaches port ${port} of ${JSON.stringify(unit)}`);
  return (await fetch(`http://${address}/`)).text();
}

/**
 * Waits until the service owns nothing on its runtime (after a delete, the purge): no container,
 * network or volume on the single engine; under Swarm no Swarm service, task (history included),
 * task container, overlay network or volume. Returns the counts by kind, all 0.
 */
export async function nothingLeftOf(
  serviceId: string,
  runtime: Runtime = E2E_RUNTIME,
): Promise<Record<string, number>> {
  return eventually(
    () => ownedBy(serviceId, runtime),
    (left) => Object.values(left).every((count) => count === 0),
  );
}

async function ownedBy(serviceId: string, runtime: Runtime): Promise<Record<string, number>> {
  const filters = labelled(serviceId);
  const engine = runtime === 'swarm' ? swarmEngine() : singleEngine;
  const common = {
    containers: (await engine.listContainers({ all: true, filters })).length,
    networks: (await engine.listNetworks({ filters })).length,
    volumes: ((await engine.listVolumes({ filters })).Volumes ?? []).length,
  };
  if (runtime !== 'swarm') return common;
  return {
    ...common,
    services: (await swarmServicesOf(serviceId)).length,
    tasks: (await swarmTasksOf(serviceId)).length,
  };
}

/** The service's Swarm services on the swarm engine (one per component). */
export async function swarmServicesOf(serviceId: string): Promise<Docker.Service[]> {
  return swarmEngine().listServices({ filters: labelled(serviceId) });
}

/** The running containers of the service's tasks on the swarm engine's node: Docker's name and id. */
export async function swarmContainersOf(serviceId: string): Promise<{ name: string; id: string }[]> {
  const found = await swarmEngine().listContainers({ filters: labelled(serviceId) });
  return found.map((container) => ({
    name: (container.Names[0] ?? '').replace(/^\//, ''),
    id: container.Id,
  }));
}

/** The service's Swarm tasks, in every state Swarm still keeps. */
export async function swarmTasksOf(serviceId: string): Promise<unknown[]> {
  return swarmEngine().listTasks({ filters: labelled(serviceId) });
}

async function containers(serviceId: string): Promise<Unit[]> {
  const found = await singleEngine.listContainers({ all: true, filters: labelled(serviceId) });
  const units = await Promise.all(
    found.map(async ({ Id }) => {
      // A container removed between the list and this read is no longer a unit of the service.
      const info = await singleEngine
        .getContainer(Id)
        .inspect()
        .catch((error: { statusCode?: number }) => {
          if (error.statusCode === 404) return undefined;
          throw error;
        });
      if (!info) return [];
      const labels = info.Config.Labels ?? {};
      const ip = Object.values(info.NetworkSettings.Networks ?? {})[0]?.IPAddress;
      return [
        {
          id: info.Id,
          deploymentId: labels[DEPLOYMENT_LABEL] ?? '?',
          state: info.State.Status,
          labels,
          env: info.Config.Env ?? [],
          dial: (port: number) => (ip ? `${ip}:${port}` : undefined),
        },
      ];
    }),
  );
  return units.flat();
}

/** The fields read of a task (dockerode leaves tasks untyped). */
interface Task {
  ID: string;
  NodeID?: string;
  Spec?: { ContainerSpec?: { Labels?: Record<string, string>; Env?: string[] } };
  Status?: {
    State?: string;
    PortStatus?: { Ports?: { TargetPort?: number; PublishedPort?: number; PublishMode?: string }[] };
  };
}

async function swarmTasks(serviceId: string, isWantedOnly: boolean): Promise<Unit[]> {
  const engine = swarmEngine();
  const tasks = (await engine.listTasks({
    filters: { ...labelled(serviceId), ...(isWantedOnly ? { 'desired-state': ['running'] } : {}) },
  })) as Task[];
  const nodes = new Map(
    ((await engine.listNodes()) as { ID: string; Status?: { Addr?: string } }[]).map((node) => [
      node.ID,
      node.Status?.Addr ?? '',
    ]),
  );
  return tasks.map((task) => {
    const labels = task.Spec?.ContainerSpec?.Labels ?? {};
    const published = task.Status?.PortStatus?.Ports ?? [];
    const node = nodes.get(task.NodeID ?? '');
    return {
      id: task.ID,
      deploymentId: labels[DEPLOYMENT_LABEL] ?? '?',
      state: task.Status?.State ?? '?',
      labels,
      env: task.Spec?.ContainerSpec?.Env ?? [],
      dial: (port: number) => {
        const match = published.find((item) => item.PublishMode === 'host' && item.TargetPort === port);
        return node && match?.PublishedPort ? `${node}:${match.PublishedPort}` : undefined;
      },
    };
  });
}
