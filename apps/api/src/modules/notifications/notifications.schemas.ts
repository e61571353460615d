import { Type, type Static, type TLiteral } from 'typebox';
import { NOTIFICATION_DELIVERY_STATUSES, NOTIFICATION_EVENTS } from '@hostctl/domain';
import { MAX_NOTIFICATION_URL_LENGTH } from '@hostctl/source-policy';
import { Id, PageQuery, Timestamp } from '../../http/schemas.js';

// The tuple type keeps Static<> at the union of the values (a plain array of literals would be never).
const literals = <T extends string>(values: readonly T[]) =>
  Type.Union(values.map((value) => Type.Literal(value)) as [TLiteral<T>]);
const Nullable = <S extends Parameters<typeof Type.Union>[0][number]>(schema: S) =>
  Type.Union([schema, Type.Null()]);

const DESCRIPTION_MAX = 200;

const Url = Type.String({ minLength: 1, maxLength: MAX_NOTIFICATION_URL_LENGTH });
const Events = Type.Array(literals(NOTIFICATION_EVENTS), {
  minItems: 1,
  maxItems: NOTIFICATION_EVENTS.length,
  uniqueItems: true,
});
const Description = Type.String({ maxLength: DESCRIPTION_MAX });

export const CreateSubscriptionBody = Type.Object(
  {
    url: Url,
    events: Events,
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Description),
    /** Required for unscoped admins and operators; implied (and checked) for scoped users. */
    customer_id: Type.Optional(Id),
  },
  { additionalProperties: false },
);
export type CreateSubscriptionBody = Static<typeof CreateSubscriptionBody>;

export const UpdateSubscriptionBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Description),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateSubscriptionBody = Static<typeof UpdateSubscriptionBody>;

export const SubscriptionListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export type SubscriptionListQuery = Static<typeof SubscriptionListQuery>;

export const Subscription = Type.Object({
  id: Type.String(),
  customer_id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  description: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Subscription = Static<typeof Subscription>;

/** Creation and rotation only: the one time the signing secret is shown. */
export const SubscriptionWithSecret = Type.Object({
  ...Subscription.properties,
  secret: Type.String({ description: 'Signing secret; shown only in this answer.' }),
});

const page = <S extends Parameters<typeof Type.Array>[0]>(item: S) =>
  Type.Object({
    data: Type.Array(item),
    total: Type.Integer(),
    page: Type.Integer(),
    per_page: Type.Integer(),
  });

export const SubscriptionList = page(Subscription);

export const Delivery = Type.Object({
  id: Type.String({ description: 'Also the Hostctl-Delivery header: the receiver deduplicates on it.' }),
  subscription_id: Type.String(),
  event: Type.String(),
  status: literals(NOTIFICATION_DELIVERY_STATUSES),
  attempts: Type.Integer(),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  last_response: Nullable(
    Type.String({
      description:
        'null unless the operator set NOTIFY_SHOW_RESPONSE_BODY: then at most the first 1 KiB of the answer, as text.',
    }),
  ),
  last_attempt_at: Nullable(Timestamp),
  next_attempt_at: Nullable(Timestamp),
  delivered_at: Nullable(Timestamp),
  created_at: Timestamp,
});
export type Delivery = Static<typeof Delivery>;

export const DeliveryList = page(Delivery);
