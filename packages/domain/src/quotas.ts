import { DomainError } from './errors.js';

/**
 * Per-customer quotas (docs/quotas.md). Every quota is a number or null, and null means
 * "unlimited" explicitly: a missing key in a plan or an override means "not set here", never
 * unlimited. The effective limits are the built-in default plan, then the customer's named plan,
 * then the customer's own overrides, each key taken from the last one that sets it.
 */
export const QUOTA_NAMES = [
  'services',
  'containers',
  'memory_mb',
  'cpus',
  'deploys_per_hour',
  'concurrent_builds',
  'build_minutes_per_day',
  'notification_subscriptions',
  'api_keys',
  'webhooks',
] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];

/** A limit: a non-negative number, or null for unlimited. */
export type QuotaLimit = number | null;
export type QuotaLimits = Record<QuotaName, QuotaLimit>;
export type PartialQuotaLimits = Partial<QuotaLimits>;

/** The name of the plan every customer without one uses; stored like any other plan. */
export const DEFAULT_QUOTA_PLAN = 'default';

/**
 * The default plan as the migration seeds it (an admin may change it later through the API).
 * The caps that existed before quotas keep their values (100 containers, 25 subscriptions, 100
 * API keys: a cap per user before, per customer now);
 * everything else starts unlimited so that an upgrade refuses nothing that worked before, except
 * builds: two at once (the default DEPLOY_CUSTOMER_CONCURRENCY share they had already) and 120
 * build minutes a day.
 */
export const DEFAULT_QUOTA_LIMITS: QuotaLimits = {
  services: null,
  containers: 100,
  memory_mb: null,
  cpus: null,
  deploys_per_hour: null,
  concurrent_builds: 2,
  build_minutes_per_day: 120,
  notification_subscriptions: 25,
  api_keys: 100,
  webhooks: null,
};

/** What each quota counts, for refusals and documentation. */
export const QUOTA_UNITS: Record<QuotaName, string> = {
  services: 'live services',
  containers: 'containers (replicas summed over live services)',
  memory_mb: 'MiB of memory limits summed over containers',
  cpus: 'CPUs of limits summed over containers',
  deploys_per_hour: 'deployments queued in the last hour',
  concurrent_builds: 'builds running at once',
  build_minutes_per_day: 'build minutes in the last 24 hours',
  notification_subscriptions: 'notification subscriptions',
  api_keys: 'active API keys',
  webhooks: 'push webhooks of live services',
};

/** Plans, then overrides, over the defaults: the last that names a quota decides it. */
export function effectiveQuotaLimits(
  defaults: PartialQuotaLimits,
  plan: PartialQuotaLimits,
  overrides: PartialQuotaLimits,
): QuotaLimits {
  const limits = { ...DEFAULT_QUOTA_LIMITS };
  for (const layer of [defaults, plan, overrides]) {
    for (const name of QUOTA_NAMES) if (name in layer) limits[name] = layer[name] ?? null;
  }
  return limits;
}

/** Reads a stored limits document, keeping only known quotas with valid values. */
export function parseQuotaLimits(value: unknown): PartialQuotaLimits {
  const limits: PartialQuotaLimits = {};
  if (typeof value !== 'object' || value === null) return limits;
  for (const name of QUOTA_NAMES) {
    if (!(name in value)) continue;
    const limit = (value as Record<string, unknown>)[name];
    if (limit === null || (typeof limit === 'number' && limit >= 0)) limits[name] = limit;
  }
  return limits;
}

/** The refusal's details: which quota, its limit, what is used and what the request asked for. */
export interface QuotaRefusal {
  name: QuotaName;
  limit: number;
  usage: number;
  requested: number;
  /**
   * Whose quota: the customer, for a link to its usage page; null for an API key of an unscoped
   * user that no customer owns (held to the default plan's `api_keys` per user, docs/quotas.md).
   */
  customer_id: string | null;
}

export function quotaRefusalMessage(refusal: QuotaRefusal): string {
  const { name, limit, usage, requested } = refusal;
  const who = refusal.customer_id === null ? 'you use' : 'the customer uses';
  return `quota ${name} exceeded: ${who} ${formatAmount(usage)} of ${formatAmount(limit)} ${QUOTA_UNITS[name]} and the request asks for ${formatAmount(requested)} more`;
}

export function quotaExceeded(refusal: QuotaRefusal): DomainError {
  return new DomainError('quota_exceeded', quotaRefusalMessage(refusal), { quota: refusal });
}

function formatAmount(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(3).replace(/0+$/, '');
}
