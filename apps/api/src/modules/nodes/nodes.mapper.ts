import type { NodeWithTasks, ServicePlacementRow } from '@hostctl/db';
import type { Placement } from '../services/services.schemas.js';
import type { SwarmNode } from './nodes.schemas.js';

const MIB = 1024n * 1024n;

export function toNode(node: NodeWithTasks): SwarmNode {
  return {
    id: node.id,
    engine_id: node.engineId,
    hostname: node.hostname,
    role: node.role === 'manager' ? 'manager' : 'worker',
    state: node.state,
    availability: node.availability as SwarmNode['availability'],
    requested_availability: node.requestedAvailability as SwarmNode['requested_availability'],
    availability_error: node.availabilityError,
    address: node.address,
    engine_version: node.engineVersion,
    labels: node.labels as Record<string, string>,
    resources: { cpus: Number(node.nanoCpus) / 1e9, memory_mb: Number(node.memoryBytes / MIB) },
    tasks: node.tasks.map((task) => ({
      id: task.id,
      service_id: task.serviceId,
      component: task.component,
      slot: task.slot,
      state: task.state,
      desired_state: task.desiredState,
      message: task.message,
    })),
    observed_at: node.observedAt.toISOString(),
  };
}

export function toPlacement(rows: ServicePlacementRow[]): Placement {
  return rows.map((row) => ({
    task_id: row.id,
    node_id: row.node.id,
    hostname: row.node.hostname,
    component: row.component,
    slot: row.slot,
    state: row.state,
    desired_state: row.desiredState,
    message: row.message,
  }));
}
