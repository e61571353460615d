import type { CustomerScope } from '@hostctl/auth-policy';
import {
  DEFAULT_QUOTA_PLAN,
  parseQuotaLimits,
  type PartialQuotaLimits,
  type QuotaLimits,
  type QuotaName,
} from '@hostctl/domain';
import type { Db } from '../client.js';
import { customerLimits, customerUsage, lockCustomerQuota } from './quota-ledger.js';

export type QuotasStore = ReturnType<typeof createQuotasStore>;

export interface QuotaPlanRow {
  name: string;
  limits: PartialQuotaLimits;
  customers: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface CustomerQuota {
  customerId: string;
  /** The customer's plan; the default plan's name when it has none. */
  plan: string;
  overrides: PartialQuotaLimits;
  /** The effective limits: default plan, then the customer's plan, then its overrides. */
  limits: QuotaLimits;
  usage: Record<QuotaName, number>;
}

/** Quota plans and each customer's plan and overrides (docs/quotas.md). */
export function createQuotasStore(db: Db) {
  async function planRow(name: string): Promise<QuotaPlanRow | null> {
    const plan = await db.quotaPlan.findUnique({
      where: { name },
      include: { _count: { select: { customers: true } } },
    });
    if (!plan) return null;
    return {
      name: plan.name,
      limits: parseQuotaLimits(plan.limits),
      customers:
        plan.name === DEFAULT_QUOTA_PLAN
          ? await db.customer.count({ where: { quotaPlan: null } })
          : plan._count.customers,
      createdAt: plan.createdAt,
      updatedAt: plan.updatedAt,
    };
  }

  return {
    async listPlans(): Promise<QuotaPlanRow[]> {
      const plans = await db.quotaPlan.findMany({ orderBy: { name: 'asc' }, select: { name: true } });
      const rows = await Promise.all(plans.map((plan) => planRow(plan.name)));
      return rows.filter((row): row is QuotaPlanRow => row !== null);
    },

    findPlan: planRow,

    /** Creates or replaces a plan's limits; `created` says which. */
    async putPlan(
      name: string,
      limits: PartialQuotaLimits,
    ): Promise<{ plan: QuotaPlanRow; created: boolean }> {
      const existing = await db.quotaPlan.findUnique({ where: { name }, select: { name: true } });
      await db.quotaPlan.upsert({
        where: { name },
        create: { name, limits },
        update: { limits },
      });
      const plan = await planRow(name);
      if (!plan) throw new Error(`quota plan ${name} vanished after its write`);
      return { plan, created: existing === null };
    },

    /** Deletes a plan no customer uses; the default plan is never deleted. */
    async deletePlan(name: string): Promise<'deleted' | 'not_found' | 'in_use'> {
      return db.$transaction(async (tx) => {
        const plan = await tx.quotaPlan.findUnique({ where: { name }, select: { name: true } });
        if (!plan) return 'not_found';
        if (name === DEFAULT_QUOTA_PLAN) return 'in_use';
        const users = await tx.customer.count({ where: { quotaPlan: name } });
        if (users > 0) return 'in_use';
        await tx.quotaPlan.delete({ where: { name } });
        return 'deleted';
      });
    },

    /** The customer's quota and usage, when the scope sees the customer. */
    async customerQuota(scope: CustomerScope, customerId: string): Promise<CustomerQuota | null> {
      if (scope.kind === 'none') return null;
      if (scope.kind === 'customer' && scope.customerId !== customerId) return null;
      const customer = await db.customer.findUnique({
        where: { id: customerId },
        select: { id: true, quotaPlan: true, quotaOverrides: true },
      });
      if (!customer) return null;
      const [limits, usage] = await Promise.all([
        customerLimits(db, customerId),
        customerUsage(db, customerId),
      ]);
      return {
        customerId,
        plan: customer.quotaPlan ?? DEFAULT_QUOTA_PLAN,
        overrides: parseQuotaLimits(customer.quotaOverrides),
        limits,
        usage,
      };
    },

    /**
     * Sets the customer's plan and overrides, under its quota lock so that a claim in flight is
     * decided wholly on the old limits or wholly on the new ones. Answers false for no customer.
     */
    async setCustomerQuota(
      customerId: string,
      quota: { plan: string; overrides: PartialQuotaLimits },
    ): Promise<boolean> {
      return db.$transaction(async (tx) => {
        await lockCustomerQuota(tx, customerId);
        const updated = await tx.customer.updateMany({
          where: { id: customerId },
          data: {
            quotaPlan: quota.plan === DEFAULT_QUOTA_PLAN ? null : quota.plan,
            quotaOverrides: quota.overrides,
          },
        });
        return updated.count > 0;
      });
    },
  };
}
