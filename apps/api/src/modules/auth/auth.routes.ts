import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import {
  issueLoginCookie,
  issueSessionCookie,
  clearSessionCookie,
  readLoginBinding,
  readSessionSecret,
  type CookieNames,
} from '../../auth/session-cookies.js';
import { problemResponses, ProblemSchema } from '../../http/schemas.js';
import { principalOf } from '../../plugins/access.js';
import { noteAuditActor } from '../../plugins/audit.js';
import { CallbackQuery, LoginQuery, LogoutResult, UserProfile } from './auth.schemas.js';
import { redirectLocation } from './redirect-target.js';
import type { SignInService } from './sign-in.service.js';

const publicProblems = (...statuses: number[]) =>
  Object.fromEntries([400, 429, 503, ...statuses].map((status) => [status, ProblemSchema]));

/** Browser sign-in (OIDC Authorization Code + PKCE), sign-out and the caller's profile. */
export function registerAuthRoutes(
  instance: FastifyInstance,
  deps: { signIn: SignInService; publicUrl: string; cookies: CookieNames },
): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const { signIn } = deps;

  app.get('/api/auth/login', {
    config: { permission: 'public' },
    schema: { querystring: LoginQuery, response: { 302: Type.Null(), ...publicProblems() } },
    handler: async (request, reply) => {
      const { url, binding } = await signIn.startLogin(
        request.query.redirect,
        readLoginBinding(request, deps.cookies),
      );
      issueLoginCookie(request, binding);
      return reply.redirect(url, 302);
    },
  });

  app.get('/api/auth/callback', {
    // A GET that changes state: sign-in is audited, failed attempts included.
    config: { permission: 'public', audit: 'auth.sign_in' },
    // The URL carries the one-time authorization code: keep it out of the per-request info logs.
    logLevel: 'warn',
    schema: { querystring: CallbackQuery, response: { 302: Type.Null(), ...publicProblems(403) } },
    handler: async (request, reply) => {
      const at = request.url.indexOf('?');
      const result = await signIn.finishLogin({
        state: request.query.state,
        rawQuery: at === -1 ? '' : request.url.slice(at + 1),
        binding: readLoginBinding(request, deps.cookies),
        previousSecret: readSessionSecret(request),
      });
      issueSessionCookie(request, result.secret);
      noteAuditActor(request, result.userId);
      instance.log.info({ reqId: request.id, userId: result.userId }, 'signed in');
      return reply.redirect(redirectLocation(result.redirect, deps.publicUrl), 302);
    },
  });

  app.post('/api/auth/logout', {
    config: { permission: 'profile:read', audit: 'auth.sign_out' },
    schema: { response: { 200: LogoutResult, ...problemResponses() } },
    handler: async (request) => {
      const result = await signIn.logout(principalOf(request));
      clearSessionCookie(request);
      return result;
    },
  });

  app.get('/api/auth/me', {
    config: { permission: 'profile:read' },
    schema: { response: { 200: UserProfile, ...problemResponses() } },
    handler: (request) => signIn.profile(principalOf(request)),
  });
}
