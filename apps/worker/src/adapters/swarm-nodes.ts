import type Docker from 'dockerode';
import { COMPONENT_LABEL, INSTANCE_LABEL, OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import type { NodeAvailabilityRequest, ObservedNode, ObservedTask } from '@hostctl/db';
import { fail, statusOf, toRuntimeError } from './docker-errors.js';
import { objectSegment } from './docker-client.js';

/**
 * The swarm's nodes and tasks as the nodes API shows them, and drain/activate. Talks to a manager
 * (SWARM_DOCKER_HOST); tasks are attributed to a hostctl service only when they carry this
 * installation's labels, so two installations sharing a swarm never see each other's services.
 */
export interface SwarmNodes {
  observe(): Promise<{ nodes: ObservedNode[]; tasks: ObservedTask[] }>;
  setAvailability(engineId: string, availability: NodeAvailabilityRequest): Promise<void>;
  /** Sets one label of the node's spec (e.g. EGRESS_NODE_LABEL); nothing when it already has that value. */
  setLabel(engineId: string, key: string, value: string): Promise<void>;
}

interface NodeInfo {
  ID: string;
  Version?: { Index?: number };
  Spec?: { Role?: string; Availability?: string; Labels?: Record<string, string> };
  Description?: {
    Hostname?: string;
    Resources?: { NanoCPUs?: number; MemoryBytes?: number };
    Engine?: { EngineVersion?: string };
  };
  Status?: { State?: string; Addr?: string };
}

interface TaskInfo {
  ID: string;
  NodeID?: string;
  ServiceID?: string;
  Slot?: number;
  DesiredState?: string;
  UpdatedAt?: string;
  Spec?: { ContainerSpec?: { Labels?: Record<string, string> } };
  Status?: { State?: string; Message?: string; Err?: string };
}

// A task's status message is the engine's; long ones (image pull errors) are cut, never needed whole.
const MESSAGE_MAX = 500;
// An update that raced another (the observer, a second operator) is retried with a fresh version.
const VERSION_RETRIES = 3;

function toObservedNode(node: NodeInfo): ObservedNode {
  const role = node.Spec?.Role === 'manager' ? 'manager' : 'worker';
  const availability = node.Spec?.Availability;
  return {
    engineId: node.ID,
    hostname: node.Description?.Hostname ?? node.ID,
    role,
    state: node.Status?.State ?? 'unknown',
    availability: availability === 'drain' || availability === 'pause' ? availability : 'active',
    address: node.Status?.Addr ?? '',
    engineVersion: node.Description?.Engine?.EngineVersion ?? '',
    nanoCpus: BigInt(node.Description?.Resources?.NanoCPUs ?? 0),
    memoryBytes: BigInt(node.Description?.Resources?.MemoryBytes ?? 0),
    labels: node.Spec?.Labels ?? {},
  };
}

/** The task as stored, or null when it is not one of this installation's or runs nowhere yet. */
function toObservedTask(task: TaskInfo, ownLabels: Map<string, Record<string, string>>): ObservedTask | null {
  const labels = ownLabels.get(task.ServiceID ?? '');
  // A task not yet assigned to a node runs nowhere; it shows once the scheduler places it.
  if (!labels || !task.NodeID) return null;
  // Swarm keeps a history of shut-down tasks per slot; only what runs or is meant to run is shown.
  if (task.DesiredState !== 'running' && task.Status?.State !== 'running') return null;
  // Container labels first (what the driver puts on each task), the service's own labels otherwise.
  const containerLabels = task.Spec?.ContainerSpec?.Labels ?? {};
  const serviceId = containerLabels[SERVICE_LABEL] ?? labels[SERVICE_LABEL];
  if (!serviceId) return null;
  return {
    id: task.ID,
    nodeEngineId: task.NodeID,
    serviceId,
    component: containerLabels[COMPONENT_LABEL] ?? labels[COMPONENT_LABEL] ?? null,
    slot: task.Slot ?? null,
    state: task.Status?.State ?? 'unknown',
    desiredState: task.DesiredState ?? 'unknown',
    message: (task.Status?.Err || task.Status?.Message || '').slice(0, MESSAGE_MAX),
    updatedAt: task.UpdatedAt ? new Date(task.UpdatedAt) : new Date(0),
  };
}

export function createSwarmNodes(docker: Docker, instance: string): SwarmNodes {
  async function ownServiceLabels(): Promise<Map<string, Record<string, string>>> {
    const services = (await docker
      .listServices({ filters: { label: [`${OWNER_LABEL}=true`, `${INSTANCE_LABEL}=${instance}`] } })
      .catch(fail('listing swarm services'))) as { ID: string; Spec?: { Labels?: Record<string, string> } }[];
    return new Map(services.map((service) => [service.ID, service.Spec?.Labels ?? {}]));
  }

  /**
   * Writes the node's spec changed by `change` (undefined: nothing to change). The whole spec goes
   * back, since Swarm replaces it, with the version it was read at; a stale version answers 500
   * "update out of sequence" (STACK-NOTES, Docker Swarm) and is read again.
   */
  async function updateSpec(
    engineId: string,
    what: string,
    change: (spec: NonNullable<NodeInfo['Spec']>) => NodeInfo['Spec'] | undefined,
  ): Promise<void> {
    const node = docker.getNode(objectSegment(engineId, 'node id'));
    for (let attempt = 1; ; attempt += 1) {
      const info = (await node.inspect().catch(fail(`inspecting node ${engineId}`))) as NodeInfo;
      const spec = change(info.Spec ?? {});
      if (!spec) return;
      try {
        await node.update({ version: info.Version?.Index, ...spec });
        return;
      } catch (error) {
        const outOfSequence = statusOf(error) === 500 && /out of sequence/i.test(String(error));
        if (!outOfSequence || attempt >= VERSION_RETRIES) throw toRuntimeError(error, what);
      }
    }
  }

  return {
    async observe() {
      const [nodes, tasks, labels] = await Promise.all([
        docker.listNodes().catch(fail('listing swarm nodes')) as Promise<NodeInfo[]>,
        docker.listTasks().catch(fail('listing swarm tasks')) as Promise<TaskInfo[]>,
        ownServiceLabels(),
      ]);
      return {
        nodes: nodes.map(toObservedNode),
        tasks: tasks.flatMap((task) => toObservedTask(task, labels) ?? []),
      };
    },

    setAvailability: (engineId, availability) =>
      updateSpec(engineId, `setting node ${engineId} to ${availability}`, (spec) =>
        spec.Availability === availability ? undefined : { ...spec, Availability: availability },
      ),

    setLabel: (engineId, key, value) =>
      updateSpec(engineId, `labelling node ${engineId}`, (spec) =>
        spec.Labels?.[key] === value ? undefined : { ...spec, Labels: { ...spec.Labels, [key]: value } },
      ),
  };
}
