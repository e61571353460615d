import { DomainError } from '@hostctl/domain';

/** Turning dockerode failures into DomainErrors, shared by every Docker adapter. */
export function statusOf(error: unknown): number | undefined {
  return (error as { statusCode?: number } | null)?.statusCode;
}

/** A runtime_error (retryable) naming what we tried and Docker's own message. */
export function toRuntimeError(error: unknown, context: string): DomainError {
  if (error instanceof DomainError) return error;
  const detail =
    (error as { json?: { message?: string } } | null)?.json?.message ??
    (error as Error | null)?.message ??
    String(error);
  return new DomainError('runtime_error', `${context}: ${detail}`, { cause: error });
}

/** A `.catch` handler that rethrows as a runtime error. */
export function fail(context: string) {
  return (error: unknown): never => {
    throw toRuntimeError(error, context);
  };
}

/** A `.catch` handler that treats the given HTTP statuses (e.g. 404 "already gone") as success. */
export function ignoreStatuses(statuses: number[], otherwise: (error: unknown) => never) {
  return (error: unknown): void => {
    if (!statuses.includes(statusOf(error) ?? 0)) otherwise(error);
  };
}

export function ignoreStatus(status: number, otherwise: (error: unknown) => never) {
  return ignoreStatuses([status], otherwise);
}
