import { ERROR_CODES, type ErrorCode, type FieldError } from '@hostctl/domain';

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
  };
}
