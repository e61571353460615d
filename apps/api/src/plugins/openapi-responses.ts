import { STATUS_CODES } from 'node:http';
import { ERROR_CODES } from '@hostctl/domain';

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';
const PROBLEM_REF = { $ref: '#/components/schemas/Problem' };

interface ResponseObject {
  description?: string;
  content?: Record<string, unknown>;
  headers?: Record<string, unknown>;
}
interface Operation {
  responses?: Record<string, ResponseObject>;
  'x-idempotent'?: boolean;
  [key: string]: unknown;
}
type Document = { paths?: Record<string, Record<string, Operation>> } & Record<string, unknown>;

const header = (description: string, schema: object = { type: 'string' }) => ({ description, schema });
const RETRY_AFTER = header('Seconds to wait before retrying.', { type: 'integer', minimum: 1 });

/** Every code of a status, so a client sees which `code` values a status can carry. */
function codesFor(status: number): string[] {
  return Object.entries(ERROR_CODES)
    .filter(([, entry]) => entry.status === status)
    .map(([code]) => code);
}

function problemResponse(status: number): ResponseObject {
  const codes = codesFor(status);
  const title = codes.length > 0 ? ERROR_CODES[codes[0] as keyof typeof ERROR_CODES].title : 'Error';
  const headers: Record<string, unknown> = {};
  if (status === 401) headers['WWW-Authenticate'] = header('`Bearer realm="hostctl"`');
  if (status === 429 || status === 503) headers['Retry-After'] = RETRY_AFTER;
  return {
    description: `${title}. Problem details; \`code\` is one of: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
    content: { [PROBLEM_MEDIA_TYPE]: { schema: PROBLEM_REF } },
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  };
}

/**
 * Post-processes the generated document: every 4xx/5xx is `application/problem+json` referencing
 * one Problem schema, empty-bodied 204/302 carry no content, and idempotent operations list the
 * responses the Idempotency-Key adds (422 reuse, 409 in progress, the replay header).
 */
export function rewriteResponses<T>(document: T): T {
  const doc = document as Document;
  for (const item of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(item)) {
      const responses = operation.responses ?? {};
      for (const [code, response] of Object.entries(responses)) {
        const status = Number(code);
        if (status >= 400) {
          responses[code] = problemResponse(status);
          continue;
        }
        // @fastify/swagger calls every success "Default Response": the status text says more.
        if (response.description === 'Default Response')
          response.description = STATUS_CODES[status] ?? 'Success';
        if (status === 204) delete response.content;
        else if (status >= 300 && status < 400) {
          delete response.content;
          response.headers = { Location: header('Where to go next.') };
        }
      }
      if (operation['x-idempotent'] === true) {
        responses['422'] = problemResponse(422);
        const conflict = problemResponse(409);
        responses['409'] = { ...conflict, headers: { 'Retry-After': RETRY_AFTER } };
        for (const [code, response] of Object.entries(responses)) {
          if (code.startsWith('2')) {
            response.headers = {
              ...response.headers,
              'Idempotent-Replayed': header(
                '`true` when this is a stored response replayed for a repeated Idempotency-Key.',
              ),
            };
          }
        }
      }
      operation.responses = responses;
      markOptionalBody(operation);
    }
  }
  return document;
}

interface RequestBody {
  required?: boolean;
  content?: Record<string, { schema?: { type?: unknown } }>;
}

/**
 * @fastify/swagger marks every request body required; a body schema that admits null (Fastify
 * validates a missing body as null) is an optional body, as for `POST /api/services/:id/rollback`.
 */
function markOptionalBody(operation: Operation): void {
  const body = operation.requestBody as RequestBody | undefined;
  const admitsNull = Object.values(body?.content ?? {}).some(
    (media) => Array.isArray(media.schema?.type) && media.schema.type.includes('null'),
  );
  if (body && admitsNull) body.required = false;
}
