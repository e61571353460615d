import { credentialAllows, customerScope, scopeAllows, type Principal } from '@hostctl/auth-policy';
import {
  DomainError,
  LIFECYCLE_MESSAGES,
  lifecycleVerdict,
  type LifecycleAction,
  type ServiceStatus,
} from '@hostctl/domain';
import type { Template } from '@hostctl/templates';
import type { DeploySourceOptions } from './deploy-source.js';
import {
  isCustomDomainClaimed,
  isUniqueViolation,
  type CustomersStore,
  type EventsStore,
  type NewService,
  type ServiceChanges,
  type ServicesStore,
  type VariableGroupsStore,
} from '@hostctl/db';
import type { JobQueue } from '../../queue-client.js';
import { checkMethodFields } from './create-input.js';
import { resolveDeploySource, revalidateVariables } from './deploy-source.js';
import { toDetail, toListItem } from './services.mapper.js';
import {
  applyUpdate,
  combineOnCreate,
  liveSecretNames,
  withTemplateSecrets,
  withSecretsHidden,
} from './secret-variables.js';
import { normaliseCustomDomains } from './custom-domains.js';
import { rollbackRefused } from './rollback-refusals.js';
import { mergeAgainWhileStale } from './stale-variables.js';
import {
  HSTS_DEFAULT_MAX_AGE,
  type CreateServiceBody,
  type ServiceListQuery,
  type UpdateServiceBody,
} from './services.schemas.js';
import type { Placement } from './services.schemas.js';

export interface ServicesServiceDeps {
  services: ServicesStore;
  /** Variable groups a service may attach (docs/secrets.md#variable-groups). */
  groups: Pick<VariableGroupsStore, 'ownedIds' | 'groupIdsOf' | 'environmentOf'>;
  customers: Pick<CustomersStore, 'findById'>;
  events: EventsStore;
  jobs: JobQueue;
  catalog: ReadonlyMap<string, Template>;
  publicUrl: (name: string) => string;
  appsDomain: string;
  /** Hosts of the platform itself (PUBLIC_URL's, the OIDC issuer's): refused as custom domains. */
  reservedHosts: readonly string[];
  /**
   * GIT_ALLOWED_HOSTS, protected endpoints, the image policy (docs/security/image-policy.md) and
   * the CONTAINER_* limits, whose ceilings refuse a compose at create.
   */
  sourcePolicy: DeploySourceOptions;
  /**
   * RUNTIME=swarm: where a service's tasks run, read after the scope check (the worker's node
   * snapshot; docs/multi-host.md#where-a-service-runs). Absent under RUNTIME=docker.
   */
  placement?: (serviceId: string) => Promise<Placement>;
  /** Frees the names other services left pending past DOMAIN_CLAIM_TTL_HOURS (docs/tls.md#custom-domains). */
  releaseStaleDomainClaims: (domains: string[], serviceId: string) => Promise<string[]>;
}

export type ServicesService = ReturnType<typeof createServicesService>;

/** A service the caller may not see is as unknown as one that does not exist. */
function found<T>(service: T | null, id: string): T {
  if (!service) throw new DomainError('not_found', `service ${id} not found`);
  return service;
}
type UpdateGuard = Parameters<ServicesStore['updateAndRedeploy']>[3];

export function createServicesService(deps: ServicesServiceDeps) {
  const { services, jobs } = deps;

  const templateOf = (id: string | null) => (id === null ? undefined : deps.catalog.get(id));

  async function visibleOr404(principal: Principal, id: string) {
    return found(await services.findById(customerScope(principal), id), id);
  }

  /** A service-limited key's list: its one service, when it matches the filters (docs/auth.md). */
  async function listLimitedTo(
    principal: Principal,
    serviceId: string,
    query: ServiceListQuery,
    page: number,
    perPage: number,
  ) {
    const found = await services.findById(customerScope(principal), serviceId);
    const search = query.search?.toLowerCase();
    const matches =
      found !== null &&
      (query.status === undefined || found.status === query.status) &&
      (query.customer_id === undefined || found.customerId === query.customer_id) &&
      (search === undefined || found.name.toLowerCase().includes(search));
    const rows = matches && page === 1 ? [found] : [];
    return { data: rows.map(toListItem), total: matches ? 1 : 0, page, per_page: perPage };
  }

  /** The detail, with the attached groups in order: one statement, read inside the caller's scope. */
  async function detailOr404(principal: Principal, id: string) {
    const service = found(await services.findDetailById(customerScope(principal), id), id);
    return { ...toDetail(service), variable_groups: service.groupIds };
  }

  /** Every id must be a group of the service's customer; another customer's is as unknown as none. */
  async function checkGroups(customerId: string, ids: readonly string[]): Promise<string[]> {
    const owned = await deps.groups.ownedIds(customerId, ids);
    const errors = ids.flatMap((id, index) =>
      owned.has(id)
        ? []
        : [
            {
              path: `/body/variable_groups/${index}`,
              message: `names no variable group of this customer (${id})`,
            },
          ],
    );
    if (errors.length > 0)
      throw new DomainError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), {
        errors,
      });
    return [...ids];
  }

  async function resolveCustomer(principal: Principal, requested: string | undefined): Promise<string> {
    const customerId = requested ?? principal.customerId ?? undefined;
    if (customerId === undefined) {
      throw new DomainError('validation_failed', '/body/customer_id is required', {
        errors: [{ path: '/body/customer_id', message: 'is required' }],
      });
    }
    if (!scopeAllows(customerScope(principal), customerId)) {
      throw new DomainError('forbidden', 'you may only create services for your own customer');
    }
    if (!(await deps.customers.findById(customerId))) {
      throw new DomainError('validation_failed', `/body/customer_id names no customer`, {
        errors: [{ path: '/body/customer_id', message: 'names no existing customer' }],
      });
    }
    return customerId;
  }

  /**
   * Checks a create request and says what it would store, refusing what a create refuses (the
   * method's fields, the compose policy, the customer's scope, groups of another customer). A
   * restore into a new service (backups/backup-clone.ts) stores it its own way.
   */
  async function prepareCreate(principal: Principal, body: CreateServiceBody) {
    checkMethodFields(body);
    // Secret variables are deployed like variables: one map of values, and which names are secret.
    const given = combineOnCreate(body.variables, body.secret_variables, new Date());
    // Attached groups give values the compose may interpolate: their customer is checked first.
    const early = body.variable_groups?.length
      ? await resolveCustomer(principal, body.customer_id)
      : undefined;
    const variableGroups =
      early && body.variable_groups ? await checkGroups(early, body.variable_groups) : [];
    const groups = await deps.groups.environmentOf(variableGroups);
    const policy = { ...deps.sourcePolicy, groupVariables: groups.variables };
    const { capacity, ...source } = withSecretsHidden(
      given,
      () => resolveDeploySource({ ...body, variables: given.variables }, deps.catalog, policy),
      groups.secretValues,
    );
    const customerId = early ?? (await resolveCustomer(principal, body.customer_id));
    const input: NewService = {
      name: body.name,
      customerId,
      deployMethod: body.deploy_method,
      ...source,
      secretNames: withTemplateSecrets(
        { variables: source.variables, secretNames: given.secretNames },
        templateOf(source.templateId),
        new Date(),
      ),
      gitUrl: body.git_url ?? null,
      gitBranch: body.git_branch ?? null,
      aiUrl: body.ai_url ?? null,
      url: deps.publicUrl(body.name),
      variableGroups,
    };
    return { input, capacity };
  }

  /**
   * One attempt at a change of variables, custom domains and/or HTTPS settings, then a redeploy.
   * Variables are merged into the read below and written only if the row still holds that read.
   */
  async function updateOnce(principal: Principal, id: string, body: UpdateServiceBody, guard?: UpdateGuard) {
    const service = await visibleOr404(principal, id);
    const changes: ServiceChanges = {};
    if (body.variable_groups)
      changes.variableGroups = await checkGroups(service.customerId, body.variable_groups);
    if (body.variables || body.secret_variables || body.variable_groups) {
      const current = {
        variables: service.variables as Record<string, string>,
        secretNames: liveSecretNames(service),
      };
      const next = applyUpdate(current, body.variables, body.secret_variables, new Date());
      // Checked with the groups the service will have (docs/secrets.md#variable-groups).
      const groups = await deps.groups.environmentOf(
        changes.variableGroups ?? (await deps.groups.groupIdsOf(id)),
      );
      const policy = { ...deps.sourcePolicy, groupVariables: groups.variables };
      const revalidated = withSecretsHidden(
        next,
        () => revalidateVariables(service, next.variables, deps.catalog, policy),
        groups.secretValues,
      );
      changes.variables = revalidated.variables;
      changes.secretNames = withTemplateSecrets(
        { variables: revalidated.variables, secretNames: next.secretNames },
        templateOf(service.templateId),
        new Date(),
      );
      changes.variablesReadAs = { variables: service.variables, secretNames: service.secretNames };
      if (revalidated.capacity !== undefined) changes.capacity = revalidated.capacity;
    }
    if (body.custom_domains) {
      const domains = normaliseCustomDomains(body.custom_domains, deps);
      await deps.releaseStaleDomainClaims(domains, id);
      // A friendly early answer naming the domain; the unique key below is what decides races.
      const claimed = await services.findDomainClaims(domains, id);
      if (claimed.length > 0) throw domainTaken(claimed);
      changes.customDomains = domains;
    }
    if (body.https) Object.assign(changes, httpsChanges(body.https));
    const { deployment } = await services
      .updateAndRedeploy(id, service.customerId, changes, guard)
      .catch((error: unknown) => {
        if (isCustomDomainClaimed(error)) throw domainTaken(changes.customDomains ?? []);
        throw error;
      });
    await jobs.enqueueDeploy(deployment.id);
    return { ...(await detailOr404(principal, id)), deploy_job_id: deployment.id };
  }

  return {
    async list(principal: Principal, query: ServiceListQuery) {
      const page = query.page ?? 1;
      const perPage = query.per_page ?? 20;
      const limitedTo = principal.limits?.serviceId ?? null;
      if (limitedTo !== null) return listLimitedTo(principal, limitedTo, query, page, perPage);
      const { rows, total } = await services.list(customerScope(principal), {
        page,
        perPage,
        sort: query.sort ?? 'created_at',
        order: query.order ?? 'desc',
        ...(query.status ? { status: query.status } : {}),
        ...(query.customer_id ? { customerId: query.customer_id } : {}),
        ...(query.search ? { search: query.search } : {}),
      });
      return { data: rows.map(toListItem), total, page, per_page: perPage };
    },

    async get(principal: Principal, id: string) {
      const detail = await detailOr404(principal, id);
      return deps.placement ? { ...detail, placement: await deps.placement(id) } : detail;
    },

    prepareCreate,

    async create(principal: Principal, body: CreateServiceBody) {
      const { input, capacity } = await prepareCreate(principal, body);
      try {
        const { service, deployment } = await services.createWithDeployment(input, capacity);
        await jobs.enqueueDeploy(deployment.id);
        return {
          id: service.id,
          name: service.name,
          status: 'deploying' as const,
          url: service.url,
          deploy_job_id: deployment.id,
        };
      } catch (error) {
        if (isUniqueViolation(error))
          throw new DomainError('name_taken', `a service named ${body.name} already exists`);
        throw error;
      }
    },

    async lifecycle(principal: Principal, id: string, action: LifecycleAction) {
      const service = await visibleOr404(principal, id);
      if (lifecycleVerdict(action, service.status) === 'noop') {
        return { id, status: service.status, message: LIFECYCLE_MESSAGES[action].noop };
      }
      const outcome = await jobs.runLifecycle(id, action);
      if (outcome.kind === 'done') return { id, status: outcome.status, message: outcome.message };
      if (outcome.kind === 'failed')
        throw new DomainError('runtime_error', `${action} failed: ${outcome.reason}`);
      const current = (await services.findById(customerScope(principal), id))?.status ?? service.status;
      return { id, status: current, message: `${capitalise(action)} requested; still in progress` };
    },

    async redeploy(principal: Principal, id: string) {
      await visibleOr404(principal, id);
      const { deployment } = await services.requestRedeploy(id);
      await jobs.enqueueDeploy(deployment.id);
      return { id, status: 'deploying' as ServiceStatus, deploy_job_id: deployment.id };
    },

    /**
     * Runs an earlier release again as a new deployment (docs/deployments.md#rollback): what it
     * ran, pinned to its image digests, with the service's compose and variables set back to it.
     * Setting them back is a change `manage` guards: a deploy token may only roll back to a release
     * that ran the service's current variables (and compose).
     */
    async rollback(principal: Principal, id: string, targetId: string | undefined) {
      await visibleOr404(principal, id);
      const outcome = await services.requestRollback(id, targetId, {
        mayChangeDefinition: credentialAllows(principal, 'manage'),
      });
      if (!outcome.queued) throw rollbackRefused(id, outcome);
      await jobs.enqueueDeploy(outcome.deployment.id);
      return { id, status: 'deploying' as const, deploy_job_id: outcome.deployment.id };
    },

    /**
     * Changes variables, custom domains and/or HTTPS settings, then redeploys so they take effect.
     * `guard` runs in the write's transaction under the service's row lock (an attach's precondition).
     */
    async update(principal: Principal, id: string, body: UpdateServiceBody, guard?: UpdateGuard) {
      // Merged into the variables current at the write: a concurrent change is never lost.
      return mergeAgainWhileStale(() => updateOnce(principal, id, body, guard));
    },

    /**
     * One secret variable's value, for callers that may change the service (docs/secrets.md):
     * the route allows `manage` only and the audit records the name, never the value.
     */
    async revealSecret(principal: Principal, id: string, name: string) {
      const service = await visibleOr404(principal, id);
      const secrets = liveSecretNames(service);
      const value = (service.variables as Record<string, string>)[name];
      const updatedAt = secrets[name];
      if (value === undefined || updatedAt === undefined)
        throw new DomainError('not_found', `service ${id} has no secret variable ${name}`);
      return { name, value, updated_at: updatedAt };
    },

    async remove(principal: Principal, id: string) {
      await visibleOr404(principal, id);
      await services.markDeleted(id);
      await jobs.enqueueDelete(id);
    },

    async events(principal: Principal, id: string, page: { page: number; perPage: number }) {
      await visibleOr404(principal, id);
      const { rows, total } = await deps.events.listForService(id, page);
      return {
        data: rows.map((event) => ({
          type: event.type,
          status: event.status,
          message: event.message,
          timestamp: event.createdAt.toISOString(),
        })),
        total,
        page: page.page,
        per_page: page.perPage,
      };
    },
  };
}

function domainTaken(domains: readonly string[]): DomainError {
  return new DomainError('conflict', `custom domain ${domains.join(', ')} is used by another service`);
}

function capitalise(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** The columns behind `https` (docs/tls.md#https-and-plain-http); a field left out keeps its value. */
function httpsChanges(https: NonNullable<UpdateServiceBody['https']>): ServiceChanges {
  const changes: ServiceChanges = {};
  if (https.redirect !== undefined) changes.httpsRedirect = https.redirect;
  if (https.hsts !== undefined)
    changes.hstsMaxAge =
      https.hsts === false ? null : https.hsts === true ? HSTS_DEFAULT_MAX_AGE : https.hsts.max_age;
  return changes;
}
