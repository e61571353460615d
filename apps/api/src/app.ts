import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { LIMITS } from '@hostctl/domain';
import type { Authenticator } from './auth/authenticator.js';
import { validatorCompiler } from './http/validation.js';
import { registerAccessControl } from './plugins/access.js';
import { registerErrorHandlers } from './plugins/errors.js';
import { registerJsonBodies } from './plugins/json-bodies.js';

export interface AppOptions {
  logger: FastifyBaseLogger;
  trustProxy: boolean;
  authenticator: Authenticator;
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
  });
  app.setValidatorCompiler(validatorCompiler);
  registerErrorHandlers(app);
  registerJsonBodies(app);
  registerAccessControl(app, options.authenticator);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    reply.header('cache-control', 'no-store');
  });
  await options.routes(app);
  return app;
}

/** Never log credentials: keys, cookies and session material are redacted from request logs. */
export const LOG_REDACTIONS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.key',
  '*.password',
  '*.SESSION_SECRET',
];
