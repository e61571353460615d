import { DomainError } from '@hostctl/domain';

/** Prisma's code for a unique-constraint violation. */
export function isUniqueViolation(error: unknown): boolean {
  return hasCode(error, 'P2002') || pgCode(error) === '23505';
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

/** Connection-level failures become 503 so clients retry instead of seeing a 500. */
export function isConnectionFailure(error: unknown): boolean {
  const text = String((error as { message?: string } | null)?.message ?? error);
  return /ECONNREFUSED|ETIMEDOUT|Connection terminated|timeout exceeded when trying to connect|Can't reach database|DatabaseNotReachable|ECONNRESET/i.test(
    text,
  );
}

export function toDomainError(error: unknown): unknown {
  if (isConnectionFailure(error)) {
    return new DomainError('dependency_unavailable', 'the database is unavailable; retry shortly', {
      headers: { 'retry-after': '5' },
      cause: error,
    });
  }
  return error;
}
