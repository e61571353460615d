/**
 * A customer's quotas as the dashboard shows them (docs/quotas.md): for each quota the API
 * reports, the sentence a person reads ("3 of 5 services"), whether it is at or over its limit in
 * words (never colour alone), and the figures of its bar. Kept apart from the screen so the
 * wording is tested without a browser.
 */

/** What a quota counts, singular and plural, and its row label. Unknown quotas fall back to their name. */
const QUOTA_NOUNS: Record<string, { label: string; one: string; many: string }> = {
  services: { label: 'Services', one: 'service', many: 'services' },
  containers: { label: 'Containers', one: 'container', many: 'containers' },
  memory_mb: { label: 'Memory limits', one: 'MiB of memory', many: 'MiB of memory' },
  cpus: { label: 'CPU limits', one: 'CPU', many: 'CPUs' },
  deploys_per_hour: {
    label: 'Deploys in the last hour',
    one: 'deploy in the last hour',
    many: 'deploys in the last hour',
  },
  concurrent_builds: {
    label: 'Builds running at once',
    one: 'build running at once',
    many: 'builds running at once',
  },
  build_minutes_per_day: {
    label: 'Build minutes in the last 24 hours',
    one: 'build minute in the last 24 hours',
    many: 'build minutes in the last 24 hours',
  },
  notification_subscriptions: {
    label: 'Notification subscriptions',
    one: 'notification subscription',
    many: 'notification subscriptions',
  },
  api_keys: { label: 'API keys', one: 'API key', many: 'API keys' },
  webhooks: { label: 'Push webhooks', one: 'push webhook', many: 'push webhooks' },
};

function nounsOf(name: string) {
  const known = QUOTA_NOUNS[name];
  if (known) return known;
  const words = name.replaceAll('_', ' ');
  return { label: words.charAt(0).toUpperCase() + words.slice(1), one: words, many: words };
}

/** Where usage stands against the limit; `near` is 80 % or more, as the meter's `high`. */
export type QuotaState = 'unlimited' | 'within' | 'near' | 'at' | 'over';

const FLAGS: Record<QuotaState, string | null> = {
  unlimited: null,
  within: null,
  near: 'near the limit',
  at: 'at the limit',
  over: 'over the limit',
};

export interface QuotaFigure {
  name: string;
  label: string;
  used: number;
  /** null: unlimited. */
  limit: number | null;
  state: QuotaState;
  /** "3 of 5 services", or "3 services, unlimited". */
  text: string;
  /** The state in words when it needs attention, else null. */
  flag: string | null;
  /**
   * The bar: a `<meter>` cannot show more than its max, so usage over the limit fills it (the
   * text says by how much); a limit of 0 is a full bar of 1 (nothing left to use). `low` and
   * `high` colour it: below 80 % the optimum, from 80 % suboptimal, at the limit the worst (a
   * full bar's value is above `high`). null: unlimited.
   */
  bar: { value: number; max: number; low: number; high: number } | null;
}

/** Up to three decimals (CPUs), grouped the way the reader's locale groups digits. */
const figure = (value: number) => value.toLocaleString(undefined, { maximumFractionDigits: 3 });

function stateOf(used: number, limit: number | null): QuotaState {
  if (limit === null) return 'unlimited';
  if (used > limit) return 'over';
  if (used === limit) return 'at';
  return used >= limit * 0.8 ? 'near' : 'within';
}

const barOf = (value: number, max: number) => ({ value, max, low: max * 0.8, high: max * 0.999 });

export function quotaFigure(name: string, used: number, limit: number | null): QuotaFigure {
  const nouns = nounsOf(name);
  const state = stateOf(used, limit);
  const text =
    limit === null
      ? `${figure(used)} ${used === 1 ? nouns.one : nouns.many}, unlimited`
      : `${figure(used)} of ${figure(limit)} ${limit === 1 ? nouns.one : nouns.many}`;
  const bar = limit === null ? null : barOf(limit === 0 ? 1 : Math.min(used, limit), Math.max(limit, 1));
  return { name, label: nouns.label, used, limit, state, text, flag: FLAGS[state], bar };
}

/** Every quota of a `GET /api/customers/:id/quota` answer, in the API's order. */
export function quotaFigures(quota: {
  limits: Record<string, number | null>;
  usage: Record<string, number>;
}): QuotaFigure[] {
  return Object.keys(quota.limits).map((name) =>
    quotaFigure(name, quota.usage[name] ?? 0, quota.limits[name] ?? null),
  );
}

/** A `quota_exceeded` refusal (docs/quotas.md#refusal), in words, for the form that caused it. */
export function quotaRefusalText(refusal: {
  name: string;
  limit: number;
  usage: number;
  requested: number;
  customerId: string | null;
}): { title: string; sentence: string } {
  const nouns = nounsOf(refusal.name);
  const used = quotaFigure(refusal.name, refusal.usage, refusal.limit).text;
  const who = refusal.customerId === null ? 'You use' : 'The customer uses';
  const asked = `${figure(refusal.requested)} more ${refusal.requested === 1 ? nouns.one : nouns.many}`;
  return {
    title: `Quota exceeded: ${nouns.label}`,
    sentence: `${who} ${used} and this asks for ${asked}.`,
  };
}
