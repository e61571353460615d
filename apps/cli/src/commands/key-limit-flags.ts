import { actionPermissions, can, KEY_ACTIONS, type KeyAction } from '@hostctl/auth-policy';
import type { Role } from '@hostctl/domain';
import type { BootstrapStore } from '@hostctl/db';
import { optionalFlag, UsageError, type ParsedArgs } from '../args.js';

/**
 * `api-keys create --service ID | --customer ID [--actions read,deploy]`: the limits of a deploy
 * token (docs/auth.md#deploy-tokens), so a platform team can script CI onboarding without a
 * browser. The same rules as the API's: the limits never exceed the key's owner (a service or
 * customer outside its customer, an action its role cannot perform), a service names its customer.
 */
export async function keyLimitFlags(
  store: Pick<BootstrapStore, 'serviceCustomer' | 'customerExists'>,
  args: ParsedArgs,
  owner: { role: Role; customerId: string | null },
): Promise<{ serviceId: string | null; customerId: string | null; actions: KeyAction[] }> {
  const service = optionalFlag(args, 'service');
  const customer = optionalFlag(args, 'customer');
  if (service !== undefined && customer !== undefined)
    throw new UsageError('give --service or --customer, not both (a service names its customer)');
  const actions = parseActions(optionalFlag(args, 'actions'));
  for (const action of actions) {
    if (!actionPermissions(action).every((permission) => can(owner, permission)))
      throw new UsageError(`the key's owner (role ${owner.role}) may not ${action}`);
  }
  const outsideOwner = (customerId: string) => owner.customerId !== null && owner.customerId !== customerId;
  if (service !== undefined) {
    const customerId = await store.serviceCustomer(service);
    if (customerId === null) throw new UsageError(`--service names no live service`);
    if (outsideOwner(customerId))
      throw new UsageError(`--service is not a service of the key owner's customer`);
    return { serviceId: service, customerId, actions };
  }
  if (customer !== undefined) {
    if (!(await store.customerExists(customer))) throw new UsageError('--customer names no customer');
    if (outsideOwner(customer)) throw new UsageError("--customer is not the key owner's customer");
    return { serviceId: null, customerId: customer, actions };
  }
  return { serviceId: null, customerId: null, actions };
}

function parseActions(raw: string | undefined): KeyAction[] {
  if (raw === undefined) return [];
  const names = raw.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(KEY_ACTIONS as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0)
    throw new UsageError(`--actions is a comma-separated list of ${KEY_ACTIONS.join(', ')}`);
  if (new Set(names).size !== names.length) throw new UsageError('--actions names an action twice');
  return names as KeyAction[];
}
