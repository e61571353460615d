import {
  actionPermissions,
  can,
  credentialAllows,
  describeLimits,
  type Principal,
} from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import type { CreateApiKeyBody } from './auth.schemas.js';

type LimitFields = Pick<CreateApiKeyBody, 'service_id' | 'customer_id' | 'actions'>;

/**
 * A key minting a key (docs/auth.md#deploy-tokens), so a platform team can script CI onboarding
 * without a browser. Only a key with `manage` whose owner's role may manage, and only a narrower
 * key: its actions stated (a minted key is never unlimited) and among the minter's, its service or
 * customer inside the minter's. Returns the body's limits with the minter's service or customer
 * filled in when the body names neither. The creator checks (decideKeyLimitsAtCreation) still run
 * on the result, with the minter's principal, which a customer-limited key has narrowed to its
 * customer already; the store ties the new key to its minter (never outliving its expiry or
 * revocation). Every refusal is a 403 naming why, like the other refusals of a limited key.
 */
export function boundByMinter(minter: Principal, body: LimitFields): LimitFields {
  const limits = minter.limits ?? null;
  if (!actionPermissions('manage').every((permission) => can(minter, permission))) {
    throw new DomainError(
      'forbidden',
      `your role (${minter.role}) may not manage, so a key of yours cannot mint keys`,
    );
  }
  if (!credentialAllows(minter, 'manage')) {
    throw new DomainError(
      'forbidden',
      `minting an API key with an API key needs the manage action; this key is limited (${limits ? describeLimits(limits) : ''})`,
    );
  }
  // Asking for an unlimited key is asking for more than a key may give: refused like a wider one.
  if (body.actions === undefined) {
    throw new DomainError(
      'forbidden',
      'an API key may only mint a limited key: give its actions (an unlimited key needs a signed-in session)',
    );
  }
  const allowed = limits?.actions ?? null;
  const wider = allowed ? body.actions.filter((action) => !allowed.includes(action)) : [];
  if (allowed && wider.length > 0) {
    throw new DomainError(
      'forbidden',
      `this API key is limited to the actions ${allowed.join(', ')}; it cannot mint a key that may ${wider.join(', ')}`,
    );
  }
  if (limits?.serviceId) {
    const serviceId = limits.serviceId;
    const isOther =
      body.customer_id !== undefined || (body.service_id !== undefined && body.service_id !== serviceId);
    if (isOther) {
      throw new DomainError(
        'forbidden',
        `this API key is limited to service ${serviceId}; it can only mint keys for that service`,
      );
    }
    return { ...body, service_id: serviceId };
  }
  if (limits?.customerId && body.service_id === undefined && body.customer_id === undefined) {
    return { ...body, customer_id: limits.customerId };
  }
  return body;
}
