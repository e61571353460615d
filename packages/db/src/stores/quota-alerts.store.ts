import { QUOTA_NAMES, QUOTA_UNITS, type QuotaLimits, type QuotaName } from '@hostctl/domain';
import type { Db } from '../client.js';
import { CAP_TRANSACTION } from './count-cap-lock.js';
import { insertQuotaExceededNotifications } from './notification-outbox.js';
import {
  customerLimits,
  customerUsage,
  limitsByCustomer,
  lockCustomerQuota,
  usageByCustomer,
} from './quota-ledger.js';

/**
 * Over-quota notifications (docs/quotas.md#over-quota-notification). A customer's usage can be
 * above a quota only when the quota was lowered below it (claims never grow past a limit), or
 * when what it counts shrank on its own (an API key's expiry never raises usage). Each round
 * looks at every customer under its quota lock: a quota newly found above its limit gets a row in
 * `quota_alerts` and one `quota.exceeded` notification in the same transaction; a quota back
 * within its limit (or made unlimited) loses its row, which ends the streak. The row's primary
 * key makes the insert the dedup: two workers sweeping at once, or a sweep every minute for a
 * week, notify once per quota per streak.
 */
export interface QuotaAlertRaised {
  customerId: string;
  quota: QuotaName;
  limit: number;
  usage: number;
}

export type QuotaAlertsStore = ReturnType<typeof createQuotaAlertsStore>;

/** The quotas whose usage is above their limit (an unlimited one never is). */
function overQuotas(
  limits: QuotaLimits | undefined,
  usage: Record<QuotaName, number> | undefined,
): QuotaName[] {
  if (!limits || !usage) return [];
  return QUOTA_NAMES.filter((name) => {
    const limit = limits[name];
    return limit !== null && usage[name] > limit;
  });
}

/** Up to three decimals (CPUs), as the refusals write them. */
const amount = (value: number) =>
  Number.isInteger(value) ? String(value) : value.toFixed(3).replace(/0+$/, '');

export function createQuotaAlertsStore(db: Db) {
  /** One customer's round: the alerts raised (each notified) and how many streaks ended. */
  async function sweepCustomer(customerId: string): Promise<{ raised: QuotaAlertRaised[]; cleared: number }> {
    return db.$transaction(async (tx) => {
      await lockCustomerQuota(tx, customerId);
      const [limits, usage] = await Promise.all([
        customerLimits(tx, customerId),
        customerUsage(tx, customerId),
      ]);
      const over = overQuotas(limits, usage);
      const cleared = await tx.quotaAlert.deleteMany({
        where: { customerId, quota: { notIn: [...over] } },
      });
      const raised: QuotaAlertRaised[] = [];
      for (const name of over) {
        const limit = limits[name] ?? 0;
        const inserted = await tx.$queryRaw<{ since: Date }[]>`
          INSERT INTO quota_alerts (customer_id, quota, "limit", usage)
          VALUES (${customerId}, ${name}, ${limit}, ${usage[name]})
          ON CONFLICT DO NOTHING RETURNING since`;
        const row = inserted[0];
        if (!row) continue;
        await insertQuotaExceededNotifications(
          tx,
          customerId,
          { name, limit, usage: usage[name], since: row.since },
          `quota ${name} exceeded: the customer uses ${amount(usage[name])} of ${amount(limit)} ${QUOTA_UNITS[name]}; nothing new of it is accepted until usage is back within the limit`,
        );
        raised.push({ customerId, quota: name, limit, usage: usage[name] });
      }
      return { raised, cleared: cleared.count };
    }, CAP_TRANSACTION);
  }

  return {
    sweepCustomer,

    /**
     * Every customer, read together without a lock (limits and usage, one statement per quota
     * kind); then only the customers found over a quota or with an open streak get their locked
     * round, which decides. At 1,000 customers a round per customer cost a transaction each
     * (docs/quotas.md#over-quota-notification). A customer going over after the read is found by the
     * next sweep, as one going over between two sweeps always was.
     */
    async sweep(): Promise<{
      customers: number;
      examined: number;
      raised: QuotaAlertRaised[];
      cleared: number;
    }> {
      const ids = (await db.customer.findMany({ select: { id: true }, orderBy: { id: 'asc' } })).map(
        (customer) => customer.id,
      );
      const [limits, usage, open] = await Promise.all([
        limitsByCustomer(db, ids),
        usageByCustomer(db, ids),
        db.quotaAlert.findMany({ select: { customerId: true }, distinct: ['customerId'] }),
      ]);
      const withStreak = new Set(open.map((alert) => alert.customerId));
      const examined = ids.filter(
        (id) => withStreak.has(id) || overQuotas(limits.get(id), usage.get(id)).length > 0,
      );
      const raised: QuotaAlertRaised[] = [];
      let cleared = 0;
      for (const customerId of examined) {
        const round = await sweepCustomer(customerId);
        raised.push(...round.raised);
        cleared += round.cleared;
      }
      return { customers: ids.length, examined: examined.length, raised, cleared };
    },

    /** The customer's open streaks, for tests and operators. */
    async alertsOf(customerId: string) {
      return db.quotaAlert.findMany({ where: { customerId }, orderBy: { quota: 'asc' } });
    },
  };
}
