import { Resolver } from 'node:dns/promises';
import type { DomainCheck } from '@hostctl/db';

/** The label under a custom domain where its owner publishes the token (docs/tls.md#custom-domains). */
export const CHALLENGE_LABEL = '_hostctl-challenge';

export interface VerifierOptions {
  /** DOMAIN_VERIFICATION_RESOLVER: comma-separated servers; empty uses the system's. */
  servers: string;
  appsDomain: string;
}

export interface DomainProof {
  domain: string;
  token: string;
  /** The service's own name: a CNAME from the domain to `<serviceName>.<APPS_DOMAIN>` proves it too. */
  serviceName: string;
}

export type DomainVerifier = (proof: DomainProof) => Promise<DomainCheck>;

/** Codes that mean "the name or record type does not exist": an answer, not a failure of DNS. */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA']);

const bare = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * Asks DNS for the proof of ownership: a TXT record `_hostctl-challenge.<domain>` whose value is
 * the token, or a CNAME from the domain to the service's apps name. Short timeouts and two tries:
 * the check runs inside an API request. Only names the customer gave are looked up, always
 * through the configured resolver, so the check cannot be pointed at an arbitrary address.
 */
export function createDomainVerifier(options: VerifierOptions): DomainVerifier {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  const servers = options.servers.split(',').filter((server) => server !== '');
  if (servers.length > 0) resolver.setServers(servers);

  return async ({ domain, token, serviceName }) => {
    const challenge = `${CHALLENGE_LABEL}.${domain}`;
    const target = bare(`${serviceName}.${options.appsDomain}`);
    const failures: string[] = [];
    const txt = await resolver.resolveTxt(challenge).catch((error: unknown) => failure(error, failures));
    if (txt?.some((chunks) => chunks.join('') === token)) return { verified: true };
    const cname = await resolver.resolveCname(domain).catch((error: unknown) => failure(error, failures));
    if (cname?.some((name) => bare(name) === target)) return { verified: true };
    if (failures.length > 0)
      return { verified: false, error: `DNS lookup failed (${failures.join(', ')}); retry later` };
    return {
      verified: false,
      error: `no TXT record ${challenge} with the token and no CNAME from ${domain} to ${target}`,
    };
  };
}

/** An absent record is no answer (null); any other error is noted as a failed lookup. */
function failure(error: unknown, failures: string[]): null {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && ABSENT.has(code)) return null;
  failures.push(typeof code === 'string' ? code : 'error');
  return null;
}
