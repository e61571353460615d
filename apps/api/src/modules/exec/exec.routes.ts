import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../plugins/access.js';
import { noteAuditSubject, recordUpgradeAudit } from '../../plugins/audit.js';
import type { AuditRecorder } from '../audit/audit-recorder.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import type { ExecRelay } from '../../live/exec-relay.js';
import { relayTerminal } from '../../live/exec-socket.js';
import type { StreamGuard } from '../../live/stream-guard.js';
import { RUN_LIMITS } from '../runs/runs.schemas.js';
import type { ExecService, ExecTarget } from './exec.service.js';

const Argument = Type.String({ maxLength: RUN_LIMITS.argMaxBytes });
const ExecQuery = Type.Object(
  {
    component: Type.Optional(
      Type.String({ minLength: 1, maxLength: 63, description: 'default: the web component, else the first' }),
    ),
    cmd: Type.Optional(
      Type.Union([Argument, Type.Array(Argument, { minItems: 1, maxItems: RUN_LIMITS.argsMax })], {
        description: 'argv, one cmd parameter per argument, run as it is (no shell); default /bin/sh',
      }),
    ),
  },
  { additionalProperties: false },
);

/** A plain GET (no upgrade): every check passed, and what a terminal would open (a preflight). */
const ExecPreflight = Type.Object(
  {
    service_id: Type.String(),
    component: Type.String(),
    command: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

declare module 'fastify' {
  interface FastifyRequest {
    /** The terminal the handshake decided on (exec.routes.ts). */
    execTarget?: ExecTarget;
  }
}

/**
 * The terminal into a running service (docs/jobs.md#terminal): a WebSocket with a TTY in one
 * running container of a component. Needs `services:operate`; an API key needs the `exec` action
 * by name. Every refusal comes before the upgrade, as an HTTP problem.
 */
export function registerExecRoutes(
  instance: FastifyInstance,
  service: ExecService,
  deps: { relay: ExecRelay; guard: StreamGuard; idleMs: number; audit: AuditRecorder },
): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.route({
    method: 'GET',
    url: '/api/services/:id/exec',
    config: { permission: 'services:operate', keyAction: 'exec', audit: 'services.exec' },
    schema: {
      params: IdParams,
      querystring: ExecQuery,
      response: { 200: ExecPreflight, ...problemResponses(400, 404, 409, 429) },
    },
    preHandler: async (request) => {
      const target = await service.prepare(
        principalOf(request),
        request.params.id,
        request.query,
        request.ws,
      );
      request.execTarget = target;
      noteAuditSubject(request, `${target.component}: ${target.command.join(' ')}`);
    },
    // Without the upgrade: the same checks (but the bounds), then what the terminal would open. A
    // browser cannot read a refused handshake's status; this answer names the refusal first.
    handler: async (request) => {
      const target = request.execTarget!;
      return { service_id: target.serviceId, component: target.component, command: target.command };
    },
    wsHandler: (socket, request) => {
      const target = request.execTarget!;
      const { id } = request.params;
      relayTerminal(socket, request, {
        relay: deps.relay,
        idleMs: deps.idleMs,
        start: () => service.start(principalOf(request), target),
        // Who, when, which service and container, the command; never what is typed (docs/audit.md).
        onOpen: (container) =>
          recordUpgradeAudit(request, deps.audit, `${container}: ${target.command.join(' ')}`),
        keepAlive: () => target.slot?.refresh() ?? Promise.resolve(),
        onEnd: () => target.slot?.release() ?? Promise.resolve(),
        guard: {
          everyMs: deps.guard.recheckMs,
          check: deps.guard.checkFor(request, (principal) => service.visibleOr404(principal, id)),
        },
      });
    },
  });
}
