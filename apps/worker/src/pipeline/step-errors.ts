import { isDomainError } from '@hostctl/domain';

/**
 * A failure that retrying cannot fix (the container's own command exits, a health check never
 * passes): the job fails at once instead of burning its retries.
 */
export class PermanentStepError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentStepError';
  }
}

/** The deployment was cancelled (service deleted) while it ran: stop quietly, delete cleans up. */
export class DeploymentCancelledError extends Error {
  constructor() {
    super('the deployment was cancelled');
    this.name = 'DeploymentCancelledError';
  }
}

export function isPermanent(error: unknown): boolean {
  if (error instanceof PermanentStepError) return true;
  return isDomainError(error) && !error.retryable;
}

/** A person-readable message; a compose rejection lists every problem, not just the first. */
export function messageOf(error: unknown): string {
  if (isDomainError(error) && error.errors && error.errors.length > 1) {
    return error.errors.map((problem) => `${problem.path}: ${problem.message}`).join('; ');
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Removes variable values from text shown to people: container output and Docker errors may echo
 * them, and variables are where tenants keep secrets. Very short values would mangle ordinary
 * words, so only values of 4+ characters are masked.
 */
export function createRedactor(variables: Record<string, string>): (text: string) => string {
  const secrets = Object.values(variables)
    .filter((value) => value.length >= 4)
    .sort((a, b) => b.length - a.length);
  return (text) => secrets.reduce((out, secret) => out.split(secret).join('***'), text);
}
