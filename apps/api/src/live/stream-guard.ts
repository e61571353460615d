import type { FastifyRequest } from 'fastify';
import { can, PUBLIC, type Principal } from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import type { Authenticator } from '../auth/authenticator.js';

/** Throws a DomainError when the stream may no longer run; the socket is then closed. */
export type StreamCheck = () => Promise<void>;

export interface StreamGuard {
  /** The bound between a revocation (key, logout, role or customer change) and the stream closing. */
  readonly recheckMs: number;
  /**
   * A check for one open stream: authenticates the upgrade request again (API key read fresh,
   * session looked up again, user re-read), re-applies the route's permission, then asks
   * `visible` whether the resource is still in the new principal's scope.
   */
  checkFor(request: FastifyRequest, visible: (principal: Principal) => Promise<unknown>): StreamCheck;
}

/**
 * The one re-check every long-lived stream uses (deployment and log WebSockets). Authorization
 * is decided at the handshake; without this a stream would outlive the credential that opened it.
 */
export function createStreamGuard(deps: { authenticator: Authenticator; recheckMs: number }): StreamGuard {
  return {
    recheckMs: deps.recheckMs,
    checkFor(request, visible) {
      return async () => {
        const principal = await deps.authenticator.authenticate(request);
        const permission = request.routeOptions.config.permission;
        if (permission !== undefined && permission !== PUBLIC && !can(principal, permission)) {
          throw new DomainError('forbidden', `your role (${principal.role}) may no longer read this stream`);
        }
        request.principal = principal;
        await visible(principal);
      };
    },
  };
}
