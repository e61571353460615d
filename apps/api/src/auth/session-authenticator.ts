import type { Principal } from '@hostctl/auth-policy';
import { toDomainError, type IdentityStore } from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import { principalOf, type SessionAuthenticator } from './authenticator.js';
import { clearSessionCookie, readSessionSecret, refreshSessionCookie } from './session-cookies.js';
import type { SessionStore } from './session-store.js';

/**
 * Browser sessions: cookie → session id → Redis record (TTL restarted) → user read fresh from
 * Postgres, so a role downgrade or a removed user takes effect on the very next request.
 */
export function createSessionAuthenticator(deps: {
  sessions: Pick<SessionStore, 'touch' | 'remove'>;
  users: Pick<IdentityStore, 'findUserById'>;
}): SessionAuthenticator {
  return {
    async principalFromRequest(request): Promise<Principal | null> {
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
