/** One field at fault: `/body/name`, a query parameter, or a compose path such as `services.web.privileged`. */
export interface FieldError {
  path: string;
  message: string;
}

/** A `quota_exceeded` refusal's figures (docs/quotas.md#refusal). */
export interface QuotaRefusal {
  name: string;
  limit: number;
  usage: number;
  requested: number;
  /** Whose quota: the customer (its usage page), or null for an unscoped user's own API keys. */
  customerId: string | null;
}

/**
 * What an RFC 9457 problem body (docs/api-decisions.md) says, field by field, each null when the
 * body does not carry it as the type the API documents. A proxy's HTML error page or an empty body
 * reads as all nulls: callers fall back to the status line.
 */
export interface ProblemFields {
  title: string | null;
  detail: string | null;
  code: string | null;
  requestId: string | null;
  errors: FieldError[];
  quota: QuotaRefusal | null;
}

/** Reads a problem body already parsed from JSON (or the raw text when it was not JSON). */
export function readProblem(body: unknown): ProblemFields {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const text = (key: string) => {
    const value = fields[key];
    return typeof value === 'string' ? value : null;
  };
  return {
    title: text('title'),
    detail: text('detail'),
    code: text('code'),
    requestId: text('request_id'),
    errors: Array.isArray(fields.errors) ? fields.errors.filter(isFieldError) : [],
    quota: quotaOf(fields.quota),
  };
}

function quotaOf(value: unknown): QuotaRefusal | null {
  if (typeof value !== 'object' || value === null) return null;
  const quota = value as Record<string, unknown>;
  const { name, limit, usage, requested, customer_id: customerId } = quota;
  if (typeof name !== 'string') return null;
  if (typeof limit !== 'number' || typeof usage !== 'number' || typeof requested !== 'number') return null;
  return { name, limit, usage, requested, customerId: typeof customerId === 'string' ? customerId : null };
}

/** An RFC 9457 problem from the API (or a network failure dressed as one). */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly code: string | null = null,
    /** The fields at fault, when the API named them. */
    readonly errors: readonly FieldError[] = [],
    /** The API's request id, to find the request in its logs. */
    readonly requestId: string | null = null,
    /** quota_exceeded: which quota, its limit, the usage and what was asked for. */
    readonly quota: QuotaRefusal | null = null,
  ) {
    super(`${title}: ${detail}`);
    this.name = 'ProblemError';
  }

  /** Builds one from whatever the API answered: a problem body, another body, or nothing. */
  static from(status: number, body: unknown): ProblemError {
    const problem = readProblem(body);
    return new ProblemError(
      status,
      problem.title ?? `Request failed (${status})`,
      problem.detail ?? (typeof body === 'string' ? body : ''),
      problem.code,
      problem.errors,
      problem.requestId,
      problem.quota,
    );
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
