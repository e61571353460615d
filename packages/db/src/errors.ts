import { DomainError } from '@hostctl/domain';

/** Prisma's code for a unique-constraint violation. */
export function isUniqueViolation(error: unknown): boolean {
  return hasCode(error, 'P2002') || pgCode(error) === '23505';
}

/**
 * The custom-domain claim key (service_custom_domains_pkey) refused a second claimant: raised by
 * the trigger on services.custom_domains, so it surfaces from the services UPDATE.
 */
export function isCustomDomainClaimed(error: unknown): boolean {
  return isUniqueViolation(error) && /service_custom_domains/.test(describe(error));
}

function describe(error: unknown): string {
  const seen = new Set<unknown>();
  const parts: string[] = [];
  const visit = (value: unknown, depth: number) => {
    if (depth > 4 || value === null || typeof value !== 'object' || seen.has(value)) {
      if (typeof value === 'string') parts.push(value);
      return;
    }
    seen.add(value);
    for (const key of [...Object.keys(value), 'message'])
      visit((value as Record<string, unknown>)[key], depth + 1);
  };
  visit(error, 0);
  return parts.join(' ');
}

export function isNotFound(error: unknown): boolean {
  return hasCode(error, 'P2025');
}

function hasCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

function pgCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { originalCode?: string; code?: string } } | null)?.cause;
  return cause?.originalCode ?? cause?.code;
}

/** Prisma codes for an unreachable, timed-out or exhausted database connection. */
const CONNECTION_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);

/** Connection-level failures: the API answers 503 so clients retry instead of seeing a 500. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  const text = String((error as { message?: string } | null)?.message ?? error);
  return /ECONNREFUSED|ETIMEDOUT|Connection terminated|timeout exceeded when trying to connect|Can't reach database|ECONNRESET/i.test(
    text,
  );
}

/** Rethrow helper: an unreachable database becomes a 503 DomainError, anything else is unchanged. */
export function toDomainError(error: unknown): unknown {
  if (!isDatabaseUnavailable(error)) return error;
  return new DomainError('dependency_unavailable', 'the database is unavailable; retry shortly', {
    headers: { 'retry-after': '5' },
    cause: error,
  });
}

/**
 * A service's variables changed between the read a change was merged into and its write
 * (ServiceChanges.variablesReadAs): nothing was written; read again and merge again.
 */
export class StaleVariablesError extends Error {
  constructor(readonly serviceId: string) {
    super(`the variables of service ${serviceId} changed since they were read`);
    this.name = 'StaleVariablesError';
  }
}
