import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, isDomainError, type ErrorCode, type FieldError } from '@hostctl/domain';
import { isDatabaseUnavailable } from '@hostctl/db';
import { isRedisUnavailable } from '@hostctl/queue';
import { buildProblem, PROBLEM_CONTENT_TYPE, problemType } from '../http/problem.js';
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
    quota: error.quota,
  });
  if (error.code === 'unauthenticated') reply.header('www-authenticate', 'Bearer realm="hostctl"');
  // A refused WebSocket upgrade must not leave its raw socket open on the server.
  if (request.ws) reply.header('connection', 'close');
  for (const [name, value] of Object.entries(error.headers ?? {})) reply.header(name, value);
  return reply.status(body.status).type(PROBLEM_CONTENT_TYPE).send(body);
}

/**
 * Fastify's own request errors (body parsing, URL decoding, router limits), each mapped to a
 * problem. `frameworkErrors` in app.ts sends the URL ones through here too.
 */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'validation_failed',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
  FST_ERR_BAD_URL: 'validation_failed',
  FST_ERR_MAX_PARAM_LENGTH: 'validation_failed',
  FST_ERR_INVALID_URL: 'validation_failed',
};

/**
 * PostgreSQL's "data exception" class (22xxx: untranslatable character 22P05, invalid byte
 * sequence 22021, datetime overflow 22008, numeric out of range 22003, invalid text 22P02 …),
 * 54000 (a value too large to index) and Prisma's value errors: the client sent a value the
 * database cannot hold. Validation should have caught it; if one slips through it is still the
 * client's 400, never a 500.
 */
const PRISMA_VALUE_CODES = new Set(['P2000', 'P2006', 'P2007', 'P2019', 'P2020', 'P2023', 'P2033']);

function isInvalidValue(error: unknown): boolean {
  const codes = [error, (error as { cause?: unknown } | null)?.cause]
    .flatMap((e) => [
      (e as { code?: unknown } | null)?.code,
      (e as { originalCode?: unknown } | null)?.originalCode,
    ])
    .filter((code): code is string => typeof code === 'string');
  return codes.some(
    (code) => /^22[0-9A-Z]{3}$/.test(code) || code === '54000' || PRISMA_VALUE_CODES.has(code),
  );
}

export function toDomain(error: FastifyError | DomainError): DomainError {
  if (isDomainError(error)) return error;
  if (error.validation) {
    const part = error.validationContext ?? 'body';
    const errors: FieldError[] = toFieldErrors(part, error.validation as never);
    const detail = errors.map((e) => `${e.path} ${e.message}`).join('; ');
    return new DomainError('validation_failed', detail, { errors });
  }
  const mapped = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (mapped) return new DomainError(mapped, describeFastifyError(mapped, error));
  if (isInvalidValue(error)) {
    return new DomainError('validation_failed', 'a value in the request is out of range or not valid text', {
      cause: error,
    });
  }
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
      return 'send the request body as application/json (UTF-8)';
    case 'payload_too_large':
      return 'the request body exceeds 1 MiB';
    default:
      return error.message;
  }
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them: malformed request lines or
 * headers, bytes left over after a too-short Content-Length, oversized headers (431). Node's
 * default answer is a bare `400 Bad Request`; this writes a problem body and closes the
 * connection, since the stream can no longer be trusted to be in step.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status =
    error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify({
    type: problemType('validation_failed'),
    title: STATUS_CODES[status] ?? 'Bad Request',
    status,
    detail:
      status === 431
        ? 'the request headers are too large'
        : status === 408
          ? 'the request was not received in time'
          : 'the request is not valid HTTP (check Content-Length and the header syntax)',
    instance: '',
    code: 'validation_failed',
  });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      `content-type: ${PROBLEM_CONTENT_TYPE}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}
