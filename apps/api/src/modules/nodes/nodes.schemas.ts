import { Type, type Static } from 'typebox';
import { Timestamp } from '../../http/schemas.js';
import { literals } from '../services/services.schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

const NodeTask = Type.Object({
  id: Type.String({ description: "The engine's task ID." }),
  service_id: Type.String(),
  component: Nullable(Type.String()),
  slot: Nullable(Type.Integer()),
  state: Type.String({ description: 'Swarm task state: running, preparing, starting, failed, …' }),
  desired_state: Type.String(),
  message: Type.String({ description: "The engine's last status message or error for the task." }),
});

export const SwarmNode = Type.Object({
  id: Type.String({ format: 'uuid' }),
  engine_id: Type.String({ description: 'The node ID `docker node ls` shows.' }),
  hostname: Type.String(),
  role: literals(['manager', 'worker'] as const),
  state: Type.String({ description: 'ready, down, unknown or disconnected' }),
  availability: literals(['active', 'pause', 'drain'] as const),
  requested_availability: Nullable(literals(['active', 'drain'] as const)),
  availability_error: Nullable(Type.String()),
  address: Type.String(),
  engine_version: Type.String(),
  labels: Type.Record(Type.String(), Type.String()),
  resources: Type.Object({ cpus: Type.Number(), memory_mb: Type.Integer() }),
  tasks: Type.Array(NodeTask),
  observed_at: Timestamp,
});
export type SwarmNode = Static<typeof SwarmNode>;

export const NodeList = Type.Object({ data: Type.Array(SwarmNode) });

export const NodeParams = Type.Object(
  { id: Type.String({ format: 'uuid' }) },
  { additionalProperties: false },
);
