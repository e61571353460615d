import { customerScope, type Principal } from '@hostctl/auth-policy';
import type { CustomDomainState, CustomDomainsStore, ServicesStore } from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import { CHALLENGE_LABEL, type DomainVerifier } from './domain-verifier.js';

export type CustomDomainsService = ReturnType<typeof createCustomDomainsService>;

export interface CustomDomainsServiceDeps {
  services: Pick<ServicesStore, 'findById'>;
  domains: Pick<CustomDomainsStore, 'list' | 'find' | 'recordCheck'>;
  verify: DomainVerifier;
  appsDomain: string;
}

/**
 * Proof of ownership of custom domains (docs/tls.md#custom-domains). The list itself is still set
 * with PATCH /api/services/:id (custom_domains); these routes show each domain's state and ask
 * the platform to check DNS now. A verified domain stays verified while it is in the list.
 */
export function createCustomDomainsService(deps: CustomDomainsServiceDeps) {
  async function visibleOr404(principal: Principal, id: string) {
    const service = await deps.services.findById(customerScope(principal), id);
    if (!service) throw new DomainError('not_found', `service ${id} not found`);
    return service;
  }

  const present = (serviceName: string, state: CustomDomainState) => ({
    name: state.name,
    status: state.status,
    verification: {
      txt_name: `${CHALLENGE_LABEL}.${state.name}`,
      txt_value: state.token,
      cname_target: `${serviceName}.${deps.appsDomain}`,
    },
    last_error: state.lastError,
    checked_at: state.checkedAt?.toISOString() ?? null,
    verified_at: state.verifiedAt?.toISOString() ?? null,
  });

  return {
    async list(principal: Principal, id: string) {
      const service = await visibleOr404(principal, id);
      const states = await deps.domains.list(service.id);
      return { data: states.map((state) => present(service.name, state)) };
    },

    async verify(principal: Principal, id: string, domain: string) {
      const service = await visibleOr404(principal, id);
      const name = domain.toLowerCase();
      const state = await deps.domains.find(service.id, name);
      if (!state) throw new DomainError('not_found', `${name} is not a custom domain of service ${id}`);
      if (state.status === 'verified') return present(service.name, state);
      const check = await deps.verify({ domain: name, token: state.token, serviceName: service.name });
      const recorded = await deps.domains.recordCheck(service.id, name, check);
      if (recorded === 'conflict') {
        throw new DomainError('conflict', `${name} is verified for another service`);
      }
      if (!recorded) throw new DomainError('not_found', `${name} is not a custom domain of service ${id}`);
      return present(service.name, recorded);
    },
  };
}
