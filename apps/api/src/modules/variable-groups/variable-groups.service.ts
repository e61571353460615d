import { customerScope, scopeAllows, type Principal } from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import {
  isUniqueViolation,
  type CustomersStore,
  type ServicesStore,
  type VariableGroupListRow,
  type VariableGroupRow,
  type VariableGroupsStore,
} from '@hostctl/db';
import type { JobQueue } from '../../queue-client.js';
import {
  applyUpdate,
  combineOnCreate,
  liveSecretNames,
  variablesView,
} from '../services/secret-variables.js';
import type {
  CreateVariableGroupBody,
  UpdateVariableGroupBody,
  VariableGroupListQuery,
} from './variable-groups.schemas.js';
import { versionMatching } from './if-match.js';

interface VariableGroupsServiceDeps {
  groups: VariableGroupsStore;
  services: Pick<ServicesStore, 'requestRedeploy'>;
  customers: Pick<CustomersStore, 'findById'>;
  jobs: Pick<JobQueue, 'enqueueDeploy'>;
}

export type VariableGroupsService = ReturnType<typeof createVariableGroupsService>;

/** A version read, merged and written back conditionally: a lost race is retried on the new version. */
const MERGE_ATTEMPTS = 3;

/**
 * Shared variable groups per customer (docs/secrets.md#variable-groups). Scoped like services:
 * every read takes the caller's customer scope, so another customer's group is a 404. Values are
 * sealed at rest by the client's vault; secret ones are write-only here as on services.
 */
export function createVariableGroupsService(deps: VariableGroupsServiceDeps) {
  const { groups } = deps;

  async function visibleOr404(principal: Principal, id: string): Promise<VariableGroupRow> {
    const group = await groups.findById(customerScope(principal), id);
    if (!group) throw new DomainError('not_found', `variable group ${id} not found`);
    return group;
  }

  async function resolveCustomer(principal: Principal, requested: string | undefined): Promise<string> {
    const customerId = requested ?? principal.customerId ?? undefined;
    if (customerId === undefined)
      throw new DomainError('validation_failed', '/body/customer_id is required', {
        errors: [{ path: '/body/customer_id', message: 'is required' }],
      });
    if (!scopeAllows(customerScope(principal), customerId))
      throw new DomainError('forbidden', 'you may only create variable groups for your own customer');
    if (!(await deps.customers.findById(customerId)))
      throw new DomainError('validation_failed', '/body/customer_id names no customer', {
        errors: [{ path: '/body/customer_id', message: 'names no existing customer' }],
      });
    return customerId;
  }

  return {
    async list(principal: Principal, query: VariableGroupListQuery) {
      const page = query.page ?? 1;
      const perPage = query.per_page ?? 20;
      const { rows, total } = await groups.list(customerScope(principal), {
        page,
        perPage,
        ...(query.customer_id ? { customerId: query.customer_id } : {}),
      });
      return { data: rows.map(toListItem), total, page, per_page: perPage };
    },

    async get(principal: Principal, id: string) {
      return toDetail(await visibleOr404(principal, id));
    },

    async create(principal: Principal, body: CreateVariableGroupBody) {
      const customerId = await resolveCustomer(principal, body.customer_id);
      const content = combineOnCreate(body.variables, body.secret_variables, new Date());
      try {
        // No values in the answer: the idempotency record keeps it in Redis (docs/secrets.md).
        return toListItem(await groups.create(customerId, { name: body.name, ...content }));
      } catch (error) {
        if (isUniqueViolation(error))
          throw new DomainError('name_taken', `a variable group named ${body.name} already exists`);
        throw error;
      }
    },

    /**
     * Merges the change into the group and bumps its version. With `ifMatch` (the ETag the caller
     * read) a group changed since is a 412; without it, the merge is redone on the newer version,
     * so two concurrent edits of different names both land and neither write is lost.
     */
    async update(
      principal: Principal,
      id: string,
      body: UpdateVariableGroupBody,
      ifMatch: string | undefined,
    ) {
      for (let attempt = 1; ; attempt += 1) {
        const current = await visibleOr404(principal, id);
        const expected = versionMatching(ifMatch, current.version);
        const next = applyUpdate(
          { variables: asMap(current.variables), secretNames: liveSecretNames(current) },
          body.variables,
          body.secret_variables,
          new Date(),
        );
        const content = { ...(body.name !== undefined ? { name: body.name } : {}), ...next };
        const updated = await groups.update(id, expected, content).catch((error: unknown) => {
          if (isUniqueViolation(error))
            throw new DomainError('name_taken', `a variable group named ${body.name ?? ''} already exists`);
          throw error;
        });
        if (updated) return { ...toDetail(updated), affected_services: await groups.attachedServices(id) };
        if (ifMatch !== undefined || attempt >= MERGE_ATTEMPTS)
          throw new DomainError(
            'precondition_failed',
            `variable group ${id} changed since version ${expected}; read it again and retry`,
          );
      }
    },

    async remove(principal: Principal, id: string) {
      await visibleOr404(principal, id);
      const outcome = await groups.remove(id);
      if (!outcome.deleted)
        throw new DomainError(
          'conflict',
          `variable group ${id} is attached to ${outcome.usedBy.map((s) => `${s.name} (${s.id})`).join(', ')}; detach it from them first (PATCH /api/services/:id with variable_groups)`,
        );
    },

    async services(principal: Principal, id: string) {
      await visibleOr404(principal, id);
      return { data: await groups.attachedServices(id) };
    },

    /**
     * Redeploys every live service the group is attached to, each an ordinary redeploy (coalesced
     * with one already queued, counted against deploys_per_hour). A quota refusal stops there; the
     * services before it stay queued and a retry with the same Idempotency-Key joins them.
     */
    async redeploy(principal: Principal, id: string) {
      await visibleOr404(principal, id);
      const data: { service_id: string; deploy_job_id: string }[] = [];
      for (const service of await groups.attachedServices(id)) {
        const { deployment } = await deps.services.requestRedeploy(service.id);
        await deps.jobs.enqueueDeploy(deployment.id);
        data.push({ service_id: service.id, deploy_job_id: deployment.id });
      }
      return { data };
    },

    /** One secret value, for callers that may `manage` (the route); the audit records the name only. */
    async revealSecret(principal: Principal, id: string, name: string) {
      const group = await visibleOr404(principal, id);
      const value = asMap(group.variables)[name];
      const updatedAt = liveSecretNames(group)[name];
      if (value === undefined || updatedAt === undefined)
        throw new DomainError('not_found', `variable group ${id} has no secret variable ${name}`);
      return { name, value, updated_at: updatedAt };
    },
  };
}

function fieldsOf(group: Omit<VariableGroupListRow, 'variableNames' | 'serviceCount'>) {
  return {
    id: group.id,
    customer_id: group.customerId,
    name: group.name,
    version: group.version,
    created_at: group.createdAt.toISOString(),
    updated_at: group.updatedAt.toISOString(),
  };
}

/** Names only, from the columns that hold no value (the list never decrypts). */
function toListItem(group: VariableGroupListRow) {
  const secret = new Set(Object.keys(asMap(group.secretNames)));
  return {
    ...fieldsOf(group),
    variable_names: group.variableNames,
    secret_variable_names: group.variableNames.filter((name) => secret.has(name)),
    service_count: group.serviceCount,
  };
}

function toDetail(group: VariableGroupRow) {
  return { ...fieldsOf(group), ...variablesView(group) };
}

function asMap(value: unknown): Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, string>)
    : {};
}
