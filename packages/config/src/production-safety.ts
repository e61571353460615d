import { ConfigError } from './load.js';
import type { ApiConfig } from './schemas.js';

/** Values that ship in this repository (tests, dev stack, examples): never acceptable in production. */
export const KNOWN_DEFAULT_SECRETS: readonly string[] = [
  'test-secret-test-secret-test-secret-0123',
  'dev-client-secret-not-for-production',
];

// Placeholders people paste from examples, and secrets with almost no variety (e.g. 32 × "a").
const PLACEHOLDER = /change.?me|replace.?me|example|not.?for.?production|^(secret|password|default)/i;
const MIN_DISTINCT_CHARACTERS = 10;

type ProductionRelevant = Pick<
  ApiConfig,
  | 'NODE_ENV'
  | 'SESSION_SECRET'
  | 'OIDC_ISSUER'
  | 'OIDC_CLIENT_SECRET'
  | 'COOKIE_SECURE'
  | 'PUBLIC_URL'
  | 'WEBHOOK_SECRET_KEY'
>;

function isWeakSecret(value: string): boolean {
  return (
    KNOWN_DEFAULT_SECRETS.includes(value) ||
    PLACEHOLDER.test(value) ||
    new Set(value).size < MIN_DISTINCT_CHARACTERS
  );
}

function isHttps(url: string): boolean {
  try {
    return new URL(url).protocol === 'https:';
  } catch {
    return false;
  }
}

/** Every reason the API config is unsafe to run in production (empty outside NODE_ENV=production). */
export function productionProblems(config: ProductionRelevant): string[] {
  if (config.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  if (config.SESSION_SECRET.length < 32)
    problems.push('SESSION_SECRET: must be at least 32 characters in production');
  else if (isWeakSecret(config.SESSION_SECRET)) {
    problems.push(
      'SESSION_SECRET: is a known default or placeholder; generate one (e.g. openssl rand -hex 32)',
    );
  }
  if (config.OIDC_CLIENT_SECRET !== '' && isWeakSecret(config.OIDC_CLIENT_SECRET)) {
    problems.push('OIDC_CLIENT_SECRET: is a known default or placeholder');
  }
  // Empty means "derived from SESSION_SECRET", which the checks above cover (docs/webhooks.md).
  if (
    config.WEBHOOK_SECRET_KEY !== '' &&
    (config.WEBHOOK_SECRET_KEY.length < 32 || isWeakSecret(config.WEBHOOK_SECRET_KEY))
  ) {
    problems.push('WEBHOOK_SECRET_KEY: must be at least 32 random characters in production');
  }
  if (!isHttps(config.OIDC_ISSUER)) problems.push('OIDC_ISSUER: must be an https:// URL in production');
  if (!isHttps(config.PUBLIC_URL)) problems.push('PUBLIC_URL: must be an https:// URL in production');
  if (!config.COOKIE_SECURE)
    problems.push('COOKIE_SECURE: must be true in production (session cookies over HTTPS only)');
  return problems;
}

/**
 * Refuses to start a production API with settings that are only meant for development: a weak or
 * default session secret, a plain-HTTP identity provider or public URL, or cookies without Secure.
 * Listing every problem at once saves an operator one restart per mistake.
 */
export function assertProductionSafe(config: ProductionRelevant): void {
  const problems = productionProblems(config);
  if (problems.length > 0) throw new ConfigError(problems);
}
