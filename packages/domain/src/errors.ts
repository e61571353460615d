/**
 * One error type for the whole system. The API maps a code to an RFC 9457 problem; the worker
 * uses `retryable` to decide between retrying a job and failing it for good.
 */
export const ERROR_CODES = {
  validation_failed: { status: 400, title: 'Invalid request', retryable: false },
  malformed_json: { status: 400, title: 'Malformed JSON body', retryable: false },
  invalid_compose: { status: 400, title: 'Compose definition rejected', retryable: false },
  unauthenticated: { status: 401, title: 'Authentication required', retryable: false },
  forbidden: { status: 403, title: 'Permission denied', retryable: false },
  origin_rejected: { status: 403, title: 'Cross-origin request refused', retryable: false },
  not_found: { status: 404, title: 'Not found', retryable: false },
  method_not_allowed: { status: 405, title: 'Method not allowed', retryable: false },
  name_taken: { status: 409, title: 'Name already in use', retryable: false },
  deployment_in_progress: { status: 409, title: 'A deployment is in progress', retryable: false },
  conflict: { status: 409, title: 'Conflicting state', retryable: false },
  quota_exceeded: { status: 409, title: 'Quota exceeded', retryable: false },
  idempotency_in_progress: { status: 409, title: 'Request with this key in progress', retryable: true },
  /** If-Match named a version that is no longer current (a concurrent edit won; read and retry). */
  precondition_failed: { status: 412, title: 'Precondition failed', retryable: false },
  payload_too_large: { status: 413, title: 'Request body too large', retryable: false },
  unsupported_media_type: { status: 415, title: 'Unsupported media type', retryable: false },
  rate_limited: { status: 429, title: 'Too many requests', retryable: true },
  internal_error: { status: 500, title: 'Internal error', retryable: true },
  dependency_unavailable: { status: 503, title: 'Service temporarily unavailable', retryable: true },
  operation_timeout: { status: 504, title: 'Operation still in progress', retryable: true },
  runtime_error: { status: 500, title: 'Container runtime error', retryable: true },
  image_unavailable: { status: 422, title: 'Image unavailable', retryable: false },
  idempotency_key_reused: { status: 422, title: 'Idempotency-Key reused', retryable: false },
  variable_kind_conflict: { status: 422, title: 'Variable both plain and secret', retryable: false },
} as const satisfies Record<string, { status: number; title: string; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  /** JSON pointer-ish path of the offending input, e.g. `/body/name` or `services.web.privileged`. */
  path: string;
  message: string;
}

/** The shape of a quota refusal (quotas.ts names the fields' meaning). */
export interface QuotaRefusalDetails {
  name: string;
  limit: number;
  usage: number;
  requested: number;
  /** The customer whose quota it is; null for an unscoped user's own API keys. */
  customer_id: string | null;
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly errors: FieldError[] | undefined;
  /** Extra response headers such as Retry-After. */
  readonly headers: Record<string, string> | undefined;
  /** quota_exceeded: the quota, its limit, the usage and what was asked for (docs/quotas.md). */
  readonly quota: QuotaRefusalDetails | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      errors?: FieldError[];
      headers?: Record<string, string>;
      quota?: QuotaRefusalDetails;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'DomainError';
    this.code = code;
    this.errors = options.errors;
    this.headers = options.headers;
    this.quota = options.quota;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }
}

export function isDomainError(value: unknown): value is DomainError {
  return value instanceof DomainError;
}

export function validationError(path: string, message: string): DomainError {
  return new DomainError('validation_failed', `${path}: ${message}`, { errors: [{ path, message }] });
}
