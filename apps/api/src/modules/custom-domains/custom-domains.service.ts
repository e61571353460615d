import { customerScope, type Principal } from '@hostctl/auth-policy';
import type {
  CertificateState,
  CustomDomainState,
  CustomDomainsStore,
  ServicesStore,
  TlsCertificatesStore,
} from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import { CHALLENGE_LABEL, type DomainVerifier } from './domain-verifier.js';

export type CustomDomainsService = ReturnType<typeof createCustomDomainsService>;

export interface CustomDomainsServiceDeps {
  services: Pick<ServicesStore, 'findById'>;
  domains: Pick<CustomDomainsStore, 'list' | 'find' | 'recordCheck'>;
  /** The per-domain certificates the worker keeps (docs/tls.md#custom-domain-certificates). */
  certificates: Pick<TlsCertificatesStore, 'statesOf'>;
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

  /** A verified domain whose certificate exists is active; only a verified one is ever ordered. */
  const present = (serviceName: string, state: CustomDomainState, certificate?: CertificateState) => ({
    name: state.name,
    status: state.status === 'verified' && certificate?.hasCertificate ? ('active' as const) : state.status,
    verification: {
      txt_name: `${CHALLENGE_LABEL}.${state.name}`,
      txt_value: state.token,
      cname_target: `${serviceName}.${deps.appsDomain}`,
    },
    last_error: state.lastError,
    checked_at: state.checkedAt?.toISOString() ?? null,
    verified_at: state.verifiedAt?.toISOString() ?? null,
    certificate:
      state.status === 'verified' && certificate
        ? {
            issuer: certificate.issuer,
            not_after: certificate.notAfter?.toISOString() ?? null,
            last_error: certificate.lastError,
          }
        : null,
  });
  const withCertificates = async (serviceName: string, states: CustomDomainState[]) => {
    const certificates = await deps.certificates.statesOf(
      states.filter((state) => state.status === 'verified').map((state) => state.name),
    );
    return states.map((state) => present(serviceName, state, certificates.get(state.name)));
  };

  return {
    async list(principal: Principal, id: string) {
      const service = await visibleOr404(principal, id);
      const states = await deps.domains.list(service.id);
      return { data: await withCertificates(service.name, states) };
    },

    async verify(principal: Principal, id: string, domain: string) {
      const service = await visibleOr404(principal, id);
      const name = domain.toLowerCase();
      const state = await deps.domains.find(service.id, name);
      if (!state) throw new DomainError('not_found', `${name} is not a custom domain of service ${id}`);
      if (state.status === 'verified') return (await withCertificates(service.name, [state]))[0]!;
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
