import { customerScope, type Principal } from '@hostctl/auth-policy';
import type { CustomerQuota, QuotaPlanRow, QuotasStore } from '@hostctl/db';
import { DomainError, validationError } from '@hostctl/domain';
import type { PutCustomerQuotaBody, PutPlanBody } from './quotas.schemas.js';

export type QuotasService = ReturnType<typeof createQuotasService>;

const toPlan = (plan: QuotaPlanRow) => ({
  name: plan.name,
  limits: plan.limits,
  customers: plan.customers,
  created_at: plan.createdAt.toISOString(),
  updated_at: plan.updatedAt.toISOString(),
});

const toQuota = (quota: CustomerQuota) => ({
  customer_id: quota.customerId,
  plan: quota.plan,
  overrides: quota.overrides,
  limits: quota.limits,
  usage: quota.usage,
});

/**
 * Quota plans and per-customer quotas (docs/quotas.md). Setting them is for unscoped admins only:
 * a quota is what the operator sells, and an admin scoped to a customer is that customer's own.
 * The route's permission (quotas:manage) already keeps operators and viewers out.
 */
export function createQuotasService(deps: { store: QuotasStore }) {
  const { store } = deps;

  function requireUnscoped(principal: Principal): void {
    if (principal.customerId !== null)
      throw new DomainError(
        'forbidden',
        'quotas are set by unscoped admins; your role is limited to your own customer',
      );
  }

  return {
    async listPlans(principal: Principal) {
      requireUnscoped(principal);
      return { data: (await store.listPlans()).map(toPlan) };
    },

    async putPlan(principal: Principal, name: string, body: PutPlanBody) {
      requireUnscoped(principal);
      const { plan, created } = await store.putPlan(name, body.limits);
      return { created, plan: toPlan(plan) };
    },

    async deletePlan(principal: Principal, name: string) {
      requireUnscoped(principal);
      const outcome = await store.deletePlan(name);
      if (outcome === 'not_found') throw new DomainError('not_found', `quota plan ${name} not found`);
      if (outcome === 'in_use')
        throw new DomainError(
          'conflict',
          name === 'default'
            ? 'the default quota plan cannot be deleted; change its limits instead'
            : `quota plan ${name} is used by customers; move them to another plan first`,
        );
    },

    /** Readable by the customer's own scoped principals and by unscoped admins and operators. */
    async customerQuota(principal: Principal, customerId: string) {
      const quota = await store.customerQuota(customerScope(principal), customerId);
      if (!quota) throw new DomainError('not_found', `customer ${customerId} not found`);
      return toQuota(quota);
    },

    async putCustomerQuota(principal: Principal, customerId: string, body: PutCustomerQuotaBody) {
      requireUnscoped(principal);
      if (!(await store.findPlan(body.plan))) throw validationError('/body/plan', 'names no quota plan');
      const found = await store.setCustomerQuota(customerId, {
        plan: body.plan,
        overrides: body.overrides ?? {},
      });
      if (!found) throw new DomainError('not_found', `customer ${customerId} not found`);
      return this.customerQuota(principal, customerId);
    },
  };
}
