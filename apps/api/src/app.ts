import { randomUUID } from 'node:crypto';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { LIMITS } from '@hostctl/domain';
import type { Authenticator } from './auth/authenticator.js';
import { buildSharedSerializer } from './http/serialization.js';
import { validatorCompiler } from './http/validation.js';
import { registerAccessControl } from './plugins/access.js';
import { registerAudit } from './plugins/audit.js';
import type { KeyLimitCheck } from './plugins/key-limits.js';
import type { AuditRecorder } from './modules/audit/audit-recorder.js';
import { answerClientError, registerErrorHandlers, sendProblem, toDomain } from './plugins/errors.js';
import { registerJsonBodies } from './plugins/json-bodies.js';
import { registerOpenApi } from './plugins/openapi.js';

export interface AppOptions {
  logger: FastifyBaseLogger;
  trustProxy: boolean;
  authenticator: Authenticator;
  /** Deploy-token limits, checked after the role for a limited key. */
  keyLimits: KeyLimitCheck;
  /** Every state-changing request is recorded here after its response. */
  audit: AuditRecorder;
  /** Cross-cutting plugins that must see the request before authentication (session cookies, rate limits, Origin check). */
  plugins?: (app: FastifyInstance) => void | Promise<void>;
  /** Registers the feature modules; called after the cross-cutting plugins. */
  routes: (app: FastifyInstance) => void | Promise<void>;
}

/** Builds the Fastify app from ready-made dependencies: tests and main.ts share this. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.logger,
    trustProxy: options.trustProxy,
    bodyLimit: LIMITS.bodyMaxBytes,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: true },
    // Undecodable URLs and overlong path parameters are answered before routing; without this
    // they get Fastify's own JSON body instead of a problem.
    frameworkErrors: (error, request, reply) => {
      void sendProblem(request, reply, toDomain(error));
    },
    clientErrorHandler: answerClientError,
    schemaController: { compilersFactory: { buildSerializer: buildSharedSerializer } },
  });
  app.setValidatorCompiler(validatorCompiler);
  registerErrorHandlers(app);
  registerJsonBodies(app);
  // First of the hooks: a request refused by a later plugin (rate limit, Origin) is audited too.
  registerAudit(app, options.audit);
  if (options.plugins) await options.plugins(app);
  // Before access control: its onRequest hook marks upgrade requests (request.ws), which a refused
  // upgrade needs so the raw socket is destroyed after the 401/403 reply.
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  registerAccessControl(app, options.authenticator, options.keyLimits);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // API answers are never cached; the dashboard's files set their own policy.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });
  // Before the routes: the OpenAPI document is collected from their schemas as they register.
  await registerOpenApi(app);
  await options.routes(app);
  return app;
}

/** Never log credentials: keys, cookies and session material are redacted from request logs. */
export const LOG_REDACTIONS = [
  'req.headers.authorization',
  'req.headers.cookie',
  // GitLab's push webhook sends the hook secret itself (docs/webhooks.md).
  'req.headers["x-gitlab-token"]',
  'res.headers["set-cookie"]',
  '*.key',
  '*.password',
  '*.SESSION_SECRET',
  '*.SECRETS_KEK',
  '*.SECRETS_KEK_RETIRED',
];
