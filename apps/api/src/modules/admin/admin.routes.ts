import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../plugins/access.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import type { AdminService } from './admin.service.js';
import {
  AdminPageQuery,
  CreateCustomerBody,
  CreateUserBody,
  Customer,
  CustomerList,
  UpdateUserBody,
  UserList,
} from './admin.schemas.js';
import { UserProfile } from '../../http/user-profile.js';

const page = (query: { page?: number; per_page?: number }) => ({
  page: query.page ?? 1,
  perPage: query.per_page ?? 20,
});

/** /api/customers and /api/users (beyond the spec; docs/api-decisions.md#administration). */
export function registerAdminRoutes(instance: FastifyInstance, service: AdminService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/customers', {
    config: { permission: 'customers:read' },
    schema: { querystring: AdminPageQuery, response: { 200: CustomerList, ...problemResponses(400) } },
    handler: (request) => service.listCustomers(principalOf(request), page(request.query)),
  });
  app.get('/api/customers/:id', {
    config: { permission: 'customers:read' },
    schema: { params: IdParams, response: { 200: Customer, ...problemResponses(404) } },
    handler: (request) => service.getCustomer(principalOf(request), request.params.id),
  });
  app.post('/api/customers', {
    config: { permission: 'customers:manage' },
    schema: { body: CreateCustomerBody, response: { 201: Customer, ...problemResponses(400, 409) } },
    handler: async (request, reply) =>
      reply.status(201).send(await service.createCustomer(principalOf(request), request.body)),
  });

  app.get('/api/users', {
    config: { permission: 'users:manage' },
    schema: { querystring: AdminPageQuery, response: { 200: UserList, ...problemResponses(400) } },
    handler: (request) => service.listUsers(principalOf(request), page(request.query)),
  });
  app.post('/api/users', {
    config: { permission: 'users:manage' },
    schema: { body: CreateUserBody, response: { 201: UserProfile, ...problemResponses(400, 409) } },
    handler: async (request, reply) =>
      reply.status(201).send(await service.createUser(principalOf(request), request.body)),
  });
  app.patch('/api/users/:id', {
    config: { permission: 'users:manage' },
    schema: {
      params: IdParams,
      body: UpdateUserBody,
      response: { 200: UserProfile, ...problemResponses(400, 404) },
    },
    handler: (request) => service.updateUser(principalOf(request), request.params.id, request.body),
  });
}
