import {
  customerScope,
  decideUserCreate,
  decideUserUpdate,
  type Principal,
  type UserAdminDecision,
} from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import { isUniqueViolation, type CustomersStore, type UsersStore } from '@hostctl/db';
import { toUserProfile } from '../../http/user-profile.js';
import type { CreateCustomerBody, CreateUserBody, UpdateUserBody } from './admin.schemas.js';

export type AdminService = ReturnType<typeof createAdminService>;

const toCustomer = (c: { id: string; name: string; createdAt: Date }) => ({
  id: c.id,
  name: c.name,
  created_at: c.createdAt.toISOString(),
});

/** Refusals say why (403) or, for what the caller may not even see, exactly what "unknown" says (404). */
function enforce(decision: UserAdminDecision, id?: string): void {
  if (decision.allowed) return;
  if (decision.reason === 'not_found') throw new DomainError('not_found', `user ${id ?? ''} not found`);
  throw new DomainError('forbidden', decision.detail);
}

/**
 * Customers (operators and admins) and users (admins): the management side beyond the spec.
 * Every store call carries the caller's customer scope; who may grant what is auth-policy's
 * decideUserCreate/decideUserUpdate (docs/auth.md#user-administration).
 */
export function createAdminService(deps: { customers: CustomersStore; users: UsersStore }) {
  const { customers, users } = deps;

  /** Looked up within the caller's scope too: a customer it cannot see is no customer at all. */
  async function existingCustomer(principal: Principal, id: string | null): Promise<string | null> {
    if (id === null) return null;
    if (!(await customers.findVisible(customerScope(principal), id))) {
      throw new DomainError('validation_failed', '/body/customer_id names no customer', {
        errors: [{ path: '/body/customer_id', message: 'names no existing customer' }],
      });
    }
    return id;
  }

  return {
    async listCustomers(principal: Principal, page: { page: number; perPage: number }) {
      const { rows, total } = await customers.list(customerScope(principal), page);
      return { data: rows.map(toCustomer), total, page: page.page, per_page: page.perPage };
    },

    async getCustomer(principal: Principal, id: string) {
      const found = await customers.findVisible(customerScope(principal), id);
      if (!found) throw new DomainError('not_found', `customer ${id} not found`);
      return toCustomer(found);
    },

    async createCustomer(principal: Principal, body: CreateCustomerBody) {
      // A customer-scoped user creating a customer would step outside its tenant by definition.
      if (principal.customerId !== null) {
        throw new DomainError('forbidden', 'customer-scoped users cannot create customers');
      }
      try {
        return toCustomer(await customers.create(body.name));
      } catch (error) {
        if (isUniqueViolation(error))
          throw new DomainError('conflict', `a customer named ${body.name} already exists`);
        throw error;
      }
    },

    async listUsers(principal: Principal, page: { page: number; perPage: number }) {
      const { rows, total } = await users.list(customerScope(principal), page);
      return { data: rows.map(toUserProfile), total, page: page.page, per_page: page.perPage };
    },

    /** A customer-scoped admin's new users belong to its customer unless it names that customer itself. */
    async createUser(principal: Principal, body: CreateUserBody) {
      const customerId = body.customer_id === undefined ? principal.customerId : body.customer_id;
      enforce(decideUserCreate(principal, { role: body.role, customerId }));
      try {
        const user = await users.create({
          email: body.email,
          name: body.name,
          role: body.role,
          customerId: await existingCustomer(principal, customerId),
        });
        return toUserProfile(user);
      } catch (error) {
        if (isUniqueViolation(error))
          throw new DomainError('conflict', `a user with email ${body.email} already exists`);
        throw error;
      }
    },

    /** Role and customer changes apply to the user's sessions and keys on their next request. */
    async updateUser(principal: Principal, id: string, body: UpdateUserBody) {
      const user = await users.updateVisible(customerScope(principal), id, async (current) => {
        enforce(decideUserUpdate(principal, current, { role: body.role, customerId: body.customer_id }), id);
        return {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.role !== undefined ? { role: body.role } : {}),
          ...(body.customer_id !== undefined
            ? { customerId: await existingCustomer(principal, body.customer_id) }
            : {}),
        };
      });
      if (!user) throw new DomainError('not_found', `user ${id} not found`);
      return toUserProfile(user);
    },
  };
}
