import type { Principal } from '@hostctl/auth-policy';
import { toDomainError, type IdentityStore } from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import { principalOf, type SessionAuthenticator } from './authenticator.js';
import {
  clearSessionCookie,
  cookieCount,
  readSessionSecret,
  refreshSessionCookie,
  sessionCookieInUse,
  type CookieNames,
} from './session-cookies.js';
import type { SessionStore } from './session-store.js';

/**
 * Browser sessions: cookie → session id → Redis record (TTL restarted) → user read fresh from
 * Postgres, so a role downgrade or a removed user takes effect on the very next request.
 */
export function createSessionAuthenticator(deps: {
  sessions: Pick<SessionStore, 'touch' | 'remove'>;
  users: Pick<IdentityStore, 'findUserById'>;
  cookies: CookieNames;
}): SessionAuthenticator {
  return {
    async principalFromRequest(request): Promise<Principal | null> {
      // Two session cookies: one was planted beside ours, and the parser would pick whichever the
      // browser sent first. Neither is trusted; the answer clears ours so a fresh sign-in starts clean.
      if (cookieCount(request, sessionCookieInUse(request, deps.cookies)) > 1) {
        clearSessionCookie(request);
        throw new DomainError(
          'unauthenticated',
          'the request carries more than one session cookie; none is used. Sign in again',
        );
      }
      const secret = readSessionSecret(request);
      if (!secret) return null;
      const found = await deps.sessions.touch(secret).catch((error: unknown) => {
        throw sessionsUnavailable(error);
      });
      if (!found) {
        // Expired or signed out: drop the dead cookie so the browser stops sending it.
        clearSessionCookie(request);
        return null;
      }
      const user = await deps.users.findUserById(found.record.userId).catch((error: unknown) => {
        throw toDomainError(error);
      });
      if (!user) {
        await deps.sessions.remove(found.handle, found.record.userId).catch(() => undefined);
        clearSessionCookie(request);
        return null;
      }
      refreshSessionCookie(request);
      return { ...principalOf(user), via: 'session', sessionId: found.handle };
    },
  };
}

export function sessionsUnavailable(cause: unknown): DomainError {
  return new DomainError('dependency_unavailable', 'the session store is unavailable; retry shortly', {
    headers: { 'retry-after': '5' },
    cause,
  });
}
