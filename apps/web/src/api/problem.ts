export interface FieldError {
  path: string;
  message: string;
}

/** An RFC 9457 problem from the API (or a network failure dressed as one), thrown by `must`. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly code: string | null = null,
    /** The fields at fault (`/body/name`, or a compose path such as `services.web.privileged`). */
    readonly errors: readonly FieldError[] = [],
  ) {
    super(`${title}: ${detail}`);
    this.name = 'ProblemError';
  }

  /** Builds one from whatever the API answered: a problem body, another body, or nothing. */
  static from(status: number, body: unknown): ProblemError {
    if (typeof body === 'object' && body !== null) {
      const fields = body as Record<string, unknown>;
      const text = (key: string) => (typeof fields[key] === 'string' ? fields[key] : null);
      return new ProblemError(
        status,
        text('title') ?? `Request failed (${status})`,
        text('detail') ?? '',
        text('code'),
        Array.isArray(fields.errors) ? fields.errors.filter(isFieldError) : [],
      );
    }
    return new ProblemError(status, `Request failed (${status})`, typeof body === 'string' ? body : '');
  }
}

/** Any thrown value as a problem, so every error renders with a title and a detail. */
export function toProblem(error: unknown): ProblemError {
  if (error instanceof ProblemError) return error;
  if (typeof error === 'object' && error !== null && 'title' in error) return ProblemError.from(0, error);
  if (error instanceof Error) return new ProblemError(0, 'The request did not complete', error.message);
  return new ProblemError(0, 'Something went wrong', String(error));
}

function isFieldError(value: unknown): value is FieldError {
  if (typeof value !== 'object' || value === null) return false;
  const field = value as Record<string, unknown>;
  return typeof field.path === 'string' && typeof field.message === 'string';
}
