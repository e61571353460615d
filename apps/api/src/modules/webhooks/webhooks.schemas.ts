import { Type } from 'typebox';
import { PageQuery, Timestamp } from '../../http/schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

const WebhookDeliveryItem = Type.Object({
  id: Type.String(),
  received_at: Timestamp,
  provider: Type.String({ description: 'github, gitlab, gitea, forgejo, or unknown' }),
  event: Nullable(Type.String()),
  delivery_id: Nullable(Type.String({ description: "The provider's delivery id header" })),
  branch: Nullable(Type.String()),
  commit: Nullable(Type.String()),
  outcome: Type.Union([Type.Literal('deployed'), Type.Literal('ignored'), Type.Literal('rejected')]),
  status_code: Type.Integer(),
  reason: Nullable(Type.String()),
  deployment_id: Nullable(Type.String()),
  source_address: Type.String(),
});

export const CreatedWebhook = Type.Object({
  url: Type.String({ description: 'The secret URL to give the forge; shown once' }),
  secret: Type.String({ description: 'The signing secret (GitLab: the secret token); shown once' }),
  created_at: Timestamp,
  rotated: Type.Boolean({ description: 'An earlier hook was replaced: its URL and secret no longer work' }),
});

export const WebhookInfo = Type.Object({
  exists: Type.Boolean(),
  created_at: Nullable(Timestamp),
  last_delivery: Nullable(WebhookDeliveryItem),
});

export const DeliveriesQuery = Type.Object(PageQuery, { additionalProperties: false });

export const DeliveryList = Type.Object({
  data: Type.Array(WebhookDeliveryItem),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});

export const HookParams = Type.Object(
  { hook_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' }) },
  { additionalProperties: false },
);

export const DeliveryAccepted = Type.Object({
  outcome: Type.Union([Type.Literal('deployed'), Type.Literal('ignored')]),
  message: Type.String(),
  deployment_id: Type.Optional(Type.String()),
  commit: Type.Optional(Type.String()),
});
