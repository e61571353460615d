import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { principalOf } from '../../plugins/access.js';
import {
  CustomerQuota,
  PlanParams,
  PutCustomerQuotaBody,
  PutPlanBody,
  QuotaPlan,
  QuotaPlanList,
} from './quotas.schemas.js';
import type { QuotasService } from './quotas.service.js';

/** Quota plans (unscoped admins) and a customer's quota with its usage (docs/quotas.md). */
export function registerQuotaRoutes(instance: FastifyInstance, service: QuotasService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/quota-plans', {
    config: { permission: 'quotas:manage' },
    schema: { response: { 200: QuotaPlanList, ...problemResponses() } },
    handler: (request) => service.listPlans(principalOf(request)),
  });
  app.put('/api/quota-plans/:name', {
    config: { permission: 'quotas:manage' },
    schema: {
      params: PlanParams,
      body: PutPlanBody,
      response: { 200: QuotaPlan, 201: QuotaPlan, ...problemResponses(400, 413, 415) },
    },
    handler: async (request, reply) => {
      const { created, plan } = await service.putPlan(
        principalOf(request),
        request.params.name,
        request.body,
      );
      return reply.status(created ? 201 : 200).send(plan);
    },
  });
  app.delete('/api/quota-plans/:name', {
    config: { permission: 'quotas:manage' },
    schema: { params: PlanParams, response: { 204: Type.Null(), ...problemResponses(400, 404, 409) } },
    handler: async (request, reply) => {
      await service.deletePlan(principalOf(request), request.params.name);
      return reply.status(204).send(null);
    },
  });

  app.get('/api/customers/:id/quota', {
    config: { permission: 'customers:read' },
    schema: { params: IdParams, response: { 200: CustomerQuota, ...problemResponses(400, 404) } },
    handler: (request) => service.customerQuota(principalOf(request), request.params.id),
  });
  app.put('/api/customers/:id/quota', {
    config: { permission: 'quotas:manage' },
    schema: {
      params: IdParams,
      body: PutCustomerQuotaBody,
      response: { 200: CustomerQuota, ...problemResponses(400, 404, 413, 415) },
    },
    handler: (request) => service.putCustomerQuota(principalOf(request), request.params.id, request.body),
  });
}
