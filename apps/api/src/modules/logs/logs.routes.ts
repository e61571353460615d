import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LIMITS } from '@hostctl/domain';
import { principalOf } from '../../plugins/access.js';
import { parseTimestamp } from '../../http/input-bounds.js';
import { IdParams, problemResponses, Timestamp } from '../../http/schemas.js';
import { coalesce } from '../../live/coalesce.js';
import { streamOverSocket } from '../../live/socket-stream.js';
import type { StreamGuard } from '../../live/stream-guard.js';
import type { LogsService } from './logs.service.js';

const LogsQuery = Type.Object(
  {
    tail: Type.Optional(
      Type.Integer({ minimum: 0, maximum: LIMITS.logsTailMax, default: LIMITS.logsTailDefault }),
    ),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'RFC 3339 timestamp' })),
    follow: Type.Optional(Type.Boolean({ description: 'true upgrades to a WebSocket' })),
    batch: Type.Optional(
      Type.Boolean({
        description:
          'With follow=true: each WebSocket message is a JSON array of the entries that arrived together ' +
          '(at most 500, sent within 20 ms) instead of one entry. Not in the contract: the dashboard asks ' +
          'for it so a burst of lines costs a few messages (docs/api-decisions.md).',
      }),
    ),
  },
  { additionalProperties: false },
);

const LogEntry = Type.Object({ timestamp: Timestamp, stream: Type.String(), message: Type.String() });

/** GET /api/services/:id/logs: a snapshot as JSON, or with follow=true a WebSocket of entries. */
export function registerLogRoutes(instance: FastifyInstance, service: LogsService, guard: StreamGuard): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.route({
    method: 'GET',
    url: '/api/services/:id/logs',
    config: { permission: 'services:read' },
    schema: {
      params: IdParams,
      querystring: LogsQuery,
      response: { 200: Type.Object({ logs: Type.Array(LogEntry) }), ...problemResponses(400, 404) },
    },
    handler: async (request) => {
      const { tail, since } = request.query;
      return {
        logs: await service.snapshot(principalOf(request), request.params.id, toOptions(tail, since)),
      };
    },
    wsHandler: (socket, request) => {
      const { id } = request.params;
      const { tail, since, batch } = request.query as { tail?: number; since?: string; batch?: boolean };
      streamOverSocket(
        socket,
        request,
        async (emit, signal) => {
          // Without batch=true the contract's form: one JSON entry per message.
          const batcher = batch ? coalesce<Record<string, unknown>>(emit) : undefined;
          const send = batcher ? (message: Record<string, unknown>) => batcher.push(message) : emit;
          try {
            await service.follow(
              principalOf(request),
              id,
              toOptions(tail, since),
              (entry) => send({ ...entry }),
              signal,
            );
          } finally {
            batcher?.flush();
          }
        },
        {
          everyMs: guard.recheckMs,
          check: guard.checkFor(request, (principal) => service.visibleOr404(principal, id)),
        },
      );
    },
  });
}

function toOptions(tail: number | undefined, since: string | undefined) {
  return { tail: tail ?? LIMITS.logsTailDefault, ...(since ? { since: parseTimestamp(since) } : {}) };
}
