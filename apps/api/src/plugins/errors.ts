import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, isDomainError, type ErrorCode, type FieldError } from '@hostctl/domain';
import { isDatabaseUnavailable } from '@hostctl/db';
import { isRedisUnavailable } from '@hostctl/queue';
import { buildProblem, PROBLEM_CONTENT_TYPE } from '../http/problem.js';
import { toFieldErrors } from '../http/validation.js';

/**
 * Every error leaves the API as RFC 9457 problem+json. Unknown errors are logged with their stack
 * and answered with a generic 500: no stack, SQL or secret ever reaches a body.
 */
export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | DomainError, request, reply) => {
    const domain = toDomain(error);
    if (domain.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(request, reply, domain);
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      request,
      reply,
      new DomainError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`),
    ),
  );
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: DomainError): FastifyReply {
  const body = buildProblem({
    code: error.code,
    detail: error.message,
    instance: request.url.split('?')[0] ?? request.url,
    requestId: request.id,
    errors: error.errors,
  });
  if (error.code === 'unauthenticated') reply.header('www-authenticate', 'Bearer realm="hostctl"');
  // A refused WebSocket upgrade must not leave its raw socket open on the server.
  if (request.ws) reply.header('connection', 'close');
  for (const [name, value] of Object.entries(error.headers ?? {})) reply.header(name, value);
  return reply.status(body.status).type(PROBLEM_CONTENT_TYPE).send(body);
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'validation_failed',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
};

function toDomain(error: FastifyError | DomainError): DomainError {
  if (isDomainError(error)) return error;
  if (error.validation) {
    const part = error.validationContext ?? 'body';
    const errors: FieldError[] = toFieldErrors(part, error.validation as never);
    const detail = errors.map((e) => `${e.path} ${e.message}`).join('; ');
    return new DomainError('validation_failed', detail, { errors });
  }
  const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (mapped) return new DomainError(mapped, describeFastifyError(mapped, error));
  if (isDatabaseUnavailable(error) || isRedisUnavailable(error)) {
    return new DomainError('dependency_unavailable', 'a backing service is unavailable; retry shortly', {
      headers: { 'retry-after': '5' },
      cause: error,
    });
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return new DomainError('validation_failed', error.message);
  }
  return new DomainError(
    'internal_error',
    'an unexpected error occurred; see the request id in the server logs',
    {
      cause: error,
    },
  );
}

function describeFastifyError(code: ErrorCode, error: FastifyError): string {
  switch (code) {
    case 'malformed_json':
      return 'the request body is not valid JSON';
    case 'unsupported_media_type':
      return 'send the request body as application/json';
    case 'payload_too_large':
      return 'the request body exceeds 1 MiB';
    default:
      return error.message;
  }
}
