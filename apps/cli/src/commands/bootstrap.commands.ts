import { generateApiKey } from '@hostctl/auth-policy';
import { ROLES, type Role } from '@hostctl/domain';
import { isUniqueViolation, type BootstrapStore } from '@hostctl/db';
import { optionalFlag, requireFlag, UsageError, type ParsedArgs } from '../args.js';
import { keyLimitFlags } from './key-limit-flags.js';

export type Command = (store: BootstrapStore, args: ParsedArgs) => Promise<Record<string, unknown>>;

export const createCustomer: Command = async (store, args) => {
  const name = requireFlag(args, 'name');
  try {
    const customer = await store.createCustomer(name);
    return { id: customer.id, name: customer.name };
  } catch (error) {
    if (isUniqueViolation(error)) throw new UsageError(`a customer named ${name} already exists`);
    throw error;
  }
};

export const createUser: Command = async (store, args) => {
  const role = requireFlag(args, 'role');
  if (!(ROLES as readonly string[]).includes(role))
    throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  const email = requireFlag(args, 'email');
  try {
    const user = await store.createUser({
      email,
      name: requireFlag(args, 'name'),
      role: role as Role,
      customerId: optionalFlag(args, 'customer') ?? null,
    });
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      role: user.role,
      customer_id: user.customerId,
      created_at: user.createdAt.toISOString(),
    };
  } catch (error) {
    if (isUniqueViolation(error)) throw new UsageError(`a user with email ${email} already exists`);
    if ((error as { code?: string }).code === 'P2003')
      throw new UsageError('--customer names no existing customer');
    throw error;
  }
};

export const createApiKey: Command = async (store, args) => {
  const email = requireFlag(args, 'email');
  const user = await store.findUserByEmail(email);
  if (!user) throw new UsageError(`no user with email ${email}`);
  const expiresRaw = optionalFlag(args, 'expires-at');
  const expiresAt = expiresRaw === undefined ? null : new Date(expiresRaw);
  if (expiresAt && (Number.isNaN(expiresAt.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(expiresRaw ?? ''))) {
    throw new UsageError('--expires-at must be an RFC 3339 timestamp');
  }
  const name = requireFlag(args, 'name');
  const limits = await keyLimitFlags(store, args, user);
  const { key, digest } = generateApiKey();
  const created = await store.createApiKey({ userId: user.id, name, digest, expiresAt, ...limits });
  return {
    id: created.id,
    name: created.name,
    key,
    created_at: created.createdAt.toISOString(),
    expires_at: created.expiresAt?.toISOString() ?? null,
    service_id: created.serviceId,
    customer_id: created.customerId,
    actions: created.actions.length > 0 ? created.actions.join(',') : null,
  };
};
