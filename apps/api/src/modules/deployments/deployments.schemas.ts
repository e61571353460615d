import { Type, type Static } from 'typebox';
import { DEPLOYMENT_STATUSES } from '@hostctl/domain';
import { Timestamp } from '../../http/schemas.js';
import { literals } from '../services/services.schemas.js';

export const DeploymentLogLine = Type.Object({
  seq: Type.Integer(),
  timestamp: Timestamp,
  stream: Type.String(),
  message: Type.String(),
});
export type DeploymentLogLine = Static<typeof DeploymentLogLine>;

export const Deployment = Type.Object({
  id: Type.String(),
  service_id: Type.String(),
  trigger: Type.String({ description: 'create or redeploy' }),
  deploy_method: Type.String(),
  status: literals(DEPLOYMENT_STATUSES),
  step: Type.Union([Type.String(), Type.Null()]),
  commit: Type.Union([Type.String(), Type.Null()]),
  image_digest: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  started_at: Type.Union([Timestamp, Type.Null()]),
  finished_at: Type.Union([Timestamp, Type.Null()]),
  logs: Type.Array(DeploymentLogLine),
  /** Seq of the last line included; pass it back as after_seq to continue. */
  last_seq: Type.Integer(),
});
export type Deployment = Static<typeof Deployment>;

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
