import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { DomainError, type FieldError } from '@hostctl/domain';

/** A lower-case LDH label: 1–63 characters, no hyphen at either end. */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
/** A top-level label: letters, or an IDN A-label; never all digits (that would be an IP). */
const TOP_LABEL = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

export interface DomainRules {
  /** APPS_DOMAIN: it and every name under it belong to services' own URLs. */
  appsDomain: string;
  /** Hosts of the platform itself (PUBLIC_URL, OIDC issuer): never a customer's domain. */
  reservedHosts: readonly string[];
}

/**
 * Checks and normalises the custom domains of a PATCH, naming each bad entry by index. The result
 * is what is stored and claimed: lower-case ASCII (an IDN becomes its punycode A-label), no
 * trailing dot. Refused: a trailing dot (`a.example.` and `a.example` must not be two names), IP
 * literals, single-label names, `localhost` and anything under it, the platform's own hosts,
 * and APPS_DOMAIN and anything under it.
 */
export function normaliseCustomDomains(input: readonly string[], rules: DomainRules): string[] {
  const errors: FieldError[] = [];
  const seen = new Map<string, number>();
  const reserved = new Set(rules.reservedHosts.map((host) => host.toLowerCase()));
  const apps = rules.appsDomain.toLowerCase().replace(/\.$/, '');
  const result = input.map((raw, index) => {
    const path = `/body/custom_domains/${index}`;
    const refuse = (message: string) => (errors.push({ path, message }), '');
    const name = normalise(raw);
    if (typeof name !== 'string') return refuse(name.error);
    if (name === apps || name.endsWith(`.${apps}`)) {
      return refuse(`must not be under ${apps}, which names services`);
    }
    if (name === 'localhost' || name.endsWith('.localhost')) return refuse('must not be localhost');
    if (reserved.has(name)) return refuse('is a host of this platform');
    const earlier = seen.get(name);
    if (earlier !== undefined) return refuse(`is the same domain as entry ${earlier}`);
    seen.set(name, index);
    return name;
  });
  if (errors.length > 0) {
    throw new DomainError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), {
      errors,
    });
  }
  return result;
}

function normalise(raw: string): string | { error: string } {
  if (raw.endsWith('.')) return { error: 'must not end with a dot' };
  if (/[\s\u0000-\u001f\u007f]/.test(raw))
    return { error: 'must not contain whitespace or control characters' };
  if (raw.startsWith('[') || isIP(raw) !== 0) return { error: 'must be a domain name, not an IP address' };
  if (/[/:@?#\\*%]/.test(raw))
    return { error: 'must be a bare domain name (no scheme, port, path or wildcard)' };
  // UTS #46 processing: lower-cases, maps IDN to punycode, and rejects invalid punycode ('').
  const ascii = domainToASCII(raw);
  if (ascii === '') return { error: 'is not a valid domain name' };
  if (ascii.length > 253) return { error: 'must be at most 253 characters' };
  const labels = ascii.split('.');
  if (labels.length < 2) return { error: 'must have at least two labels (name.tld)' };
  if (!labels.every((label) => LABEL.test(label))) {
    return { error: 'labels must be 1–63 letters, digits or hyphens, not starting or ending with a hyphen' };
  }
  if (!TOP_LABEL.test(labels.at(-1)!)) return { error: 'must end in a valid top-level domain' };
  if (isIP(ascii) !== 0) return { error: 'must be a domain name, not an IP address' };
  return ascii;
}
