import { Type, type Static } from 'typebox';
import { QUOTA_NAMES, type QuotaName } from '@hostctl/domain';
import { Id, Timestamp } from '../../http/schemas.js';

/** A plan's name: a lower-case slug, like a DNS label. */
const PLAN_NAME_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$';
const PlanName = Type.String({ minLength: 1, maxLength: 63, pattern: PLAN_NAME_PATTERN });

/** A limit: a whole number (cpus: up to three decimals), or null for unlimited. */
const limitOf = (name: QuotaName) =>
  name === 'cpus'
    ? Type.Union([Type.Number({ minimum: 0, maximum: 1_000_000, multipleOf: 0.001 }), Type.Null()])
    : Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000 }), Type.Null()]);

/** Some quotas, each a limit or null (unlimited); a quota left out is not set at this level. */
const PartialLimits = Type.Object(
  Object.fromEntries(QUOTA_NAMES.map((name) => [name, Type.Optional(limitOf(name))])),
  { additionalProperties: false },
);
/** Every quota, each a limit or null (unlimited). */
const FullLimits = Type.Object(Object.fromEntries(QUOTA_NAMES.map((name) => [name, limitOf(name)])));
const Usage = Type.Object(Object.fromEntries(QUOTA_NAMES.map((name) => [name, Type.Number()])));

export const PlanParams = Type.Object({ name: PlanName }, { additionalProperties: false });
export const PutPlanBody = Type.Object({ limits: PartialLimits }, { additionalProperties: false });
export type PutPlanBody = Static<typeof PutPlanBody>;

export const QuotaPlan = Type.Object({
  name: Type.String(),
  limits: PartialLimits,
  customers: Type.Integer({ description: 'customers on this plan' }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const QuotaPlanList = Type.Object({ data: Type.Array(QuotaPlan) });

export const CustomerQuota = Type.Object({
  customer_id: Id,
  plan: Type.String(),
  overrides: PartialLimits,
  limits: FullLimits,
  usage: Usage,
});
export const PutCustomerQuotaBody = Type.Object(
  { plan: PlanName, overrides: Type.Optional(PartialLimits) },
  { additionalProperties: false },
);
export type PutCustomerQuotaBody = Static<typeof PutCustomerQuotaBody>;
