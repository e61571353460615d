import { Type, type Static } from 'typebox';
import { DEPLOYMENT_STATUSES, DEPLOYMENT_TRIGGERS, UPDATE_ORDERS } from '@hostctl/domain';
import { PageQuery, Timestamp } from '../../http/schemas.js';
import { literals } from '../services/services.schemas.js';

export const DeploymentLogLine = Type.Object({
  seq: Type.Integer(),
  timestamp: Timestamp,
  stream: Type.String(),
  message: Type.String(),
});
export type DeploymentLogLine = Static<typeof DeploymentLogLine>;

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

/** The fields of a deployment that a history page and the single view share. */
const summaryFields = {
  id: Type.String(),
  service_id: Type.String(),
  trigger: literals(DEPLOYMENT_TRIGGERS),
  status: literals(DEPLOYMENT_STATUSES),
  step: nullable(Type.String()),
  commit: nullable(Type.String()),
  image_digest: nullable(Type.String()),
  image_digests: nullable(
    Type.Record(Type.String(), Type.String(), {
      description:
        'Compose service → the image reference that ran, pinned (repo@sha256:… or a local image id)',
    }),
  ),
  update_order: nullable(literals(UPDATE_ORDERS)),
  rollback_of: nullable(
    Type.String({ description: 'rollback: the deployment whose release this one runs again' }),
  ),
  warnings: Type.Array(Type.String(), {
    description:
      'What the runtime could not honour from the plan, e.g. deploy.replicas on a single engine (never dropped silently)',
  }),
  error: nullable(Type.String()),
  created_at: Timestamp,
  started_at: nullable(Timestamp),
  finished_at: nullable(Timestamp),
};

export const DeploymentSummary = Type.Object(summaryFields);
export type DeploymentSummary = Static<typeof DeploymentSummary>;

export const Deployment = Type.Object({
  ...summaryFields,
  deploy_method: Type.String(),
  logs: Type.Array(DeploymentLogLine),
  /** Seq of the last line included; pass it back as after_seq to continue. */
  last_seq: Type.Integer(),
});
export type Deployment = Static<typeof Deployment>;

export const DeploymentList = Type.Object({
  data: Type.Array(DeploymentSummary),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});
export type DeploymentList = Static<typeof DeploymentList>;

export const DeploymentListQuery = Type.Object(PageQuery, { additionalProperties: false });
export type DeploymentListQuery = Static<typeof DeploymentListQuery>;

export const DeploymentQuery = Type.Object(
  {
    wait: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 300, description: 'Seconds to wait for a final status' }),
    ),
    after_seq: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 2_147_483_647,
        description: 'Only log lines after this sequence number',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DeploymentQuery = Static<typeof DeploymentQuery>;
