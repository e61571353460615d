import { customerScope, type Principal } from '@hostctl/auth-policy';
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

/** Customers (operators and admins) and users (admins): the management side beyond the spec. */
export function createAdminService(deps: { customers: CustomersStore; users: UsersStore }) {
  const { customers, users } = deps;

  async function existingCustomer(id: string | null | undefined): Promise<string | null> {
    if (id === undefined || id === null) return null;
    if (!(await customers.findById(id))) {
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

    async listUsers(page: { page: number; perPage: number }) {
      const { rows, total } = await users.list(page);
      return { data: rows.map(toUserProfile), total, page: page.page, per_page: page.perPage };
    },

    async createUser(body: CreateUserBody) {
      try {
        const user = await users.create({
          email: body.email,
          name: body.name,
          role: body.role,
          customerId: await existingCustomer(body.customer_id),
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
      if (!(await users.findById(id))) throw new DomainError('not_found', `user ${id} not found`);
      if (id === principal.userId && body.role !== undefined && body.role !== 'admin') {
        throw new DomainError('conflict', 'you cannot remove your own admin role; ask another admin');
      }
      const user = await users.update(id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.role !== undefined ? { role: body.role } : {}),
        ...(body.customer_id !== undefined ? { customerId: await existingCustomer(body.customer_id) } : {}),
      });
      return toUserProfile(user);
    },
  };
}
