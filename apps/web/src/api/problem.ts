/** An RFC 9457 problem from the API (or a network failure dressed as one), thrown by `must`. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly code: string | null = null,
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
      );
    }
    return new ProblemError(status, `Request failed (${status})`, typeof body === 'string' ? body : '');
  }
}

/** Any thrown value as a problem, so every error renders with a title and a detail. */
export function toProblem(error: unknown): ProblemError {
  if (error instanceof ProblemError) return error;
  if (error instanceof Error) return new ProblemError(0, 'The request did not complete', error.message);
  return new ProblemError(0, 'Something went wrong', String(error));
}
