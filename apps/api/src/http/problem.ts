import { ERROR_CODES, type ErrorCode, type FieldError, type QuotaRefusalDetails } from '@hostctl/domain';

/** RFC 9457 problem details, plus a stable `code` and the request id for support. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: ErrorCode;
  request_id: string;
  errors?: FieldError[];
  /** quota_exceeded only: the quota, its limit, current usage and what the request asked for. */
  quota?: QuotaRefusalDetails;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

export function problemType(code: ErrorCode): string {
  return `https://hostctl.dev/problems/${code.replace(/_/g, '-')}`;
}

export function buildProblem(input: {
  code: ErrorCode;
  detail: string;
  instance: string;
  requestId: string;
  errors?: FieldError[] | undefined;
  quota?: QuotaRefusalDetails | undefined;
}): ProblemBody {
  const { status, title } = ERROR_CODES[input.code];
  return {
    type: problemType(input.code),
    title,
    status,
    detail: input.detail,
    instance: input.instance,
    code: input.code,
    request_id: input.requestId,
    ...(input.errors && input.errors.length > 0 ? { errors: input.errors } : {}),
    ...(input.quota ? { quota: input.quota } : {}),
  };
}
