import { Type, type Static } from 'typebox';
import { Id, PageQuery, Timestamp } from '../../http/schemas.js';

const TARGET_TYPES = [
  'service',
  'deployment',
  'run',
  'customer',
  'user',
  'api_key',
  'variable_group',
] as const;
const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

export const AuditEventsQuery = Type.Object(
  {
    ...PageQuery,
    actor_user_id: Type.Optional(Id),
    actor_api_key_id: Type.Optional(Id),
    actor_webhook_id: Type.Optional(Id),
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[a-z0-9_.]+$' })),
    target_type: Type.Optional(literals(TARGET_TYPES)),
    target_id: Type.Optional(Id),
    since: Type.Optional(Timestamp),
    until: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);
export type AuditEventsQuery = Static<typeof AuditEventsQuery>;

export const AuditEventItem = Type.Object({
  id: Type.String(),
  occurred_at: Timestamp,
  actor: Type.Object({
    type: literals(['user', 'api_key', 'webhook', 'anonymous'] as const),
    user_id: Type.Union([Type.String(), Type.Null()]),
    api_key_id: Type.Union([Type.String(), Type.Null()]),
    /** actor type webhook: the push hook that made the request (docs/webhooks.md). */
    webhook_id: Type.Union([Type.String(), Type.Null()]),
  }),
  method: Type.String(),
  route: Type.String(),
  action: Type.String(),
  target: Type.Union([Type.Object({ type: Type.String(), id: Type.String() }), Type.Null()]),
  subject: Type.Union([Type.String(), Type.Null()], {
    description: "What inside the target the request acted on: a revealed secret variable's name",
  }),
  customer_id: Type.Union([Type.String(), Type.Null()]),
  status_code: Type.Integer(),
  error_code: Type.Union([Type.String(), Type.Null()]),
  source_address: Type.String(),
  request_id: Type.String(),
});
export type AuditEventItem = Static<typeof AuditEventItem>;

export const AuditEventList = Type.Object({
  data: Type.Array(AuditEventItem),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});
