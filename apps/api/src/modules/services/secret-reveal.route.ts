import type { FastifyInstance } from 'fastify';
import type { Principal } from '@hostctl/auth-policy';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { noteAuditSubject } from '../../plugins/audit.js';
import { principalOf } from '../../plugins/access.js';
import { RevealSecretBody, RevealSecretResult } from './secret-variables.schemas.js';

/**
 * The reveal of one secret variable of a service or a variable group. POST, not GET: a read of a
 * secret is an audited action (the audit records writes), and the name travels in the body rather
 * than the URL, so no access log or proxy records it. Never cached.
 */
export function registerSecretReveal(
  app: FastifyInstance,
  route: {
    url: string;
    audit: string;
    reveal(principal: Principal, id: string, name: string): Promise<unknown>;
  },
): void {
  app.post<{ Params: { id: string }; Body: { name: string } }>(route.url, {
    config: { permission: 'services:operate', keyAction: 'manage', audit: route.audit },
    schema: {
      params: IdParams,
      body: RevealSecretBody,
      response: { 200: RevealSecretResult, ...problemResponses(400, 404) },
    },
    handler: async (request, reply) => {
      noteAuditSubject(request, request.body.name);
      const revealed = await route.reveal(principalOf(request), request.params.id, request.body.name);
      return reply.header('cache-control', 'no-store').send(revealed);
    },
  });
}
