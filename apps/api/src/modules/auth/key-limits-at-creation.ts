import {
  actionPermissions,
  can,
  customerScope,
  scopeAllows,
  type KeyLimits,
  type Principal,
} from '@hostctl/auth-policy';
import type { CustomersStore, KeyTargetsStore } from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import type { CreateApiKeyBody } from './auth.schemas.js';

/**
 * The limits of a key being created, checked against its creator: limits only narrow. A service or
 * customer the creator cannot see is 404, exactly as GET on it would be (never a hint that it
 * exists); an action the creator's role cannot perform is 403 naming it.
 */
export async function decideKeyLimitsAtCreation(
  creator: Principal,
  body: Pick<CreateApiKeyBody, 'service_id' | 'customer_id' | 'actions'>,
  deps: {
    services: Pick<KeyTargetsStore, 'serviceOwner'>;
    customers: Pick<CustomersStore, 'findVisible'>;
  },
): Promise<KeyLimits> {
  if (body.service_id !== undefined && body.customer_id !== undefined) {
    throw new DomainError('validation_failed', 'give service_id or customer_id, not both', {
      errors: [
        {
          path: '/body/customer_id',
          message: 'must be absent when service_id is given (a service names its customer)',
        },
      ],
    });
  }
  for (const action of body.actions ?? []) {
    const missing = actionPermissions(action).filter((permission) => !can(creator, permission));
    if (missing.length > 0) {
      throw new DomainError(
        'forbidden',
        `your role (${creator.role}) may not ${action}, so a key of yours cannot be given that action`,
      );
    }
  }
  const scope = customerScope(creator);
  let serviceId: string | null = null;
  let customerId: string | null = null;
  if (body.service_id !== undefined) {
    const owner = await deps.services.serviceOwner(body.service_id);
    if (!owner || !scopeAllows(scope, owner.customerId)) {
      throw new DomainError('not_found', `service ${body.service_id} not found`);
    }
    serviceId = body.service_id;
    customerId = owner.customerId;
  } else if (body.customer_id !== undefined) {
    if (!(await deps.customers.findVisible(scope, body.customer_id))) {
      throw new DomainError('not_found', `customer ${body.customer_id} not found`);
    }
    customerId = body.customer_id;
  }
  return { serviceId, customerId, actions: body.actions ?? null };
}
