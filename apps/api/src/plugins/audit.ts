import type { FastifyInstance, FastifyRequest } from 'fastify';
import { customerScope } from '@hostctl/auth-policy';
import type { AuditTargetType, NewAuditEvent } from '@hostctl/db';
import type { AuditRecorder } from '../modules/audit/audit-recorder.js';
import { defaultActionName, routeTarget, type RouteTarget } from './route-target.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Facts for the audit event that only the handler or the response know. */
    auditFacts: AuditFacts | null;
  }
}

interface AuditFacts {
  /** Who signed in (the sign-in callback has no principal yet). */
  actorUserId?: string;
  createdId?: string;
  errorCode?: string;
  /** What inside the target the request acted on: a revealed secret's name, never its value. */
  subject?: string;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Ids come from validated paths and our own responses; anything longer is cut, never stored whole. */
const MAX_ID = 100;

/** Lets a handler name the actor of a public route (the sign-in callback's new session's user). */
export function noteAuditActor(request: FastifyRequest, userId: string): void {
  request.auditFacts = { ...request.auditFacts, actorUserId: userId };
}

/** Names what inside the target a request acted on (the secret variable a reveal read). */
export function noteAuditSubject(request: FastifyRequest, subject: string): void {
  request.auditFacts = { ...request.auditFacts, subject: subject.slice(0, MAX_ID) };
}

/**
 * The audit log (docs/audit.md): every state-changing request under /api, and every route that
 * declares `config.audit` (sign-in is a GET), recorded after the response is sent, whatever its
 * status. Only structural facts are stored: the route pattern, never the URL, query or body, so no
 * secret (variables, keys, authorization codes) can reach the table.
 */
export function registerAudit(app: FastifyInstance, recorder: AuditRecorder): void {
  app.decorateRequest('auditFacts', null);
  const targets = new Map<string, RouteTarget>();
  const isAudited = (request: FastifyRequest): boolean => {
    const pattern = request.routeOptions.url;
    if (pattern === undefined || !pattern.startsWith('/api/')) return false;
    return WRITES.has(request.method) || request.routeOptions.config.audit !== undefined;
  };
  const targetOf = (pattern: string): RouteTarget => {
    let target = targets.get(pattern);
    if (!target) targets.set(pattern, (target = routeTarget(pattern)));
    return target;
  };

  // Reads the new resource's id from a create's answer and the problem code from a failure's: a
  // look at our own serialized JSON, never at the request.
  app.addHook('onSend', async (request, reply, payload) => {
    if (!isAudited(request) || typeof payload !== 'string') return payload;
    const status = reply.statusCode;
    if (status !== 201 && status < 400) return payload;
    try {
      const body = JSON.parse(payload) as { id?: unknown; code?: unknown };
      if (status === 201 && typeof body.id === 'string') {
        request.auditFacts = { ...request.auditFacts, createdId: body.id.slice(0, MAX_ID) };
      }
      if (status >= 400 && typeof body.code === 'string') {
        request.auditFacts = { ...request.auditFacts, errorCode: body.code.slice(0, MAX_ID) };
      }
    } catch {
      // Not JSON (a redirect or an empty body): nothing to read.
    }
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    if (!isAudited(request)) return;
    // After the response: the caller never waits for the insert, and a failure is logged, not thrown.
    recorder.record(auditEventOf(request, reply.statusCode, targetOf), request.log);
  });
}

/**
 * Records the event of an upgraded request (a WebSocket's 101 has no response the hook above sees):
 * the terminal records its opening this way (docs/jobs.md#terminal).
 */
export function recordUpgradeAudit(request: FastifyRequest, recorder: AuditRecorder, subject: string): void {
  noteAuditSubject(request, subject);
  recorder.record(auditEventOf(request, 101, routeTarget), request.log);
}

function auditEventOf(
  request: FastifyRequest,
  statusCode: number,
  targetOf: (pattern: string) => RouteTarget,
): NewAuditEvent {
  const pattern = request.routeOptions.url ?? '';
  const { type, id } = targetIdOf(request, targetOf(pattern));
  const principal = request.principal;
  const facts = request.auditFacts ?? {};
  return {
    actorType: principal
      ? principal.via === 'api_key'
        ? 'api_key'
        : 'user'
      : facts.actorUserId
        ? 'user'
        : 'anonymous',
    actorUserId: principal?.userId ?? facts.actorUserId ?? null,
    actorApiKeyId: principal?.apiKeyId ?? null,
    actorCustomerId: principal?.customerId ?? null,
    actorSeesAll: principal ? customerScope(principal).kind === 'all' : false,
    method: request.method,
    route: pattern,
    action: request.routeOptions.config.audit ?? defaultActionName(request.method, pattern),
    targetType: type,
    targetId: id,
    statusCode,
    errorCode: facts.errorCode ?? null,
    subject: facts.subject ?? null,
    sourceAddress: request.ip,
    requestId: request.id,
  };
}

function targetIdOf(
  request: FastifyRequest,
  target: RouteTarget,
): { type: AuditTargetType | null; id: string | null } {
  if (target.kind === 'item') {
    const value = (request.params as Record<string, unknown>)[target.param];
    return { type: target.type, id: typeof value === 'string' ? value.slice(0, MAX_ID) : null };
  }
  if (target.kind === 'collection' && request.auditFacts?.createdId !== undefined) {
    return { type: target.type, id: request.auditFacts.createdId };
  }
  return { type: null, id: null };
}
