import type { FastifyRequest } from 'fastify';
import {
  digestApiKey,
  hasApiKeyShape,
  isLimited,
  KEY_ACTIONS,
  narrowToKey,
  type KeyAction,
  type KeyLimits,
  type Principal,
} from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import type { IdentityStore, User } from '@hostctl/db';

/** Resolves a browser session to its principal; provided by the auth module (sessions live in Redis). */
export interface SessionAuthenticator {
  principalFromRequest(request: FastifyRequest): Promise<Principal | null>;
}

export interface Authenticator {
  /** Returns the caller or throws 401. Reads the user fresh so role changes apply at once. */
  authenticate(request: FastifyRequest): Promise<Principal>;
}

export function createAuthenticator(deps: {
  identity: Pick<IdentityStore, 'findApiKeyByDigest' | 'touchApiKey'>;
  sessions?: SessionAuthenticator;
  now?: () => Date;
}): Authenticator {
  const now = deps.now ?? (() => new Date());

  async function fromApiKey(request: FastifyRequest, header: string): Promise<Principal> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw unauthenticated('the Authorization header must be "Bearer <API key>"');
    const key = match[1];
    if (!hasApiKeyShape(key)) throw unauthenticated('the API key is malformed');
    const found = await deps.identity.findApiKeyByDigest(digestApiKey(key));
    const at = now();
    if (!found || found.revokedAt) throw unauthenticated('the API key is invalid or has been revoked');
    if (found.expiresAt && found.expiresAt <= at) throw unauthenticated('the API key has expired');
    // We already hold lastUsedAt: write only when it is stale, so a hot key costs no UPDATE per request.
    // Awaited (at most once a minute per key) so a listing right after a key's first use shows it used;
    // a failed write is logged, never a failed request.
    if (isStale(found.lastUsedAt, at)) {
      await deps.identity.touchApiKey(found.id, at).catch((error: unknown) => {
        request.log.warn({ err: error }, 'could not record API key use');
      });
    }
    const owner: Principal = { ...principalOf(found.user), via: 'api_key', apiKeyId: found.id };
    const limits = limitsOf(found);
    if (!isLimited(limits)) return owner;
    const narrowed = narrowToKey(owner, limits);
    if (!narrowed) {
      throw new DomainError(
        'forbidden',
        `this API key is limited to customer ${limits.customerId ?? ''}, which its owner may no longer access`,
      );
    }
    return narrowed;
  }

  return {
    async authenticate(request) {
      const header = request.headers.authorization;
      if (header !== undefined) return fromApiKey(request, header);
      const fromSession = deps.sessions ? await deps.sessions.principalFromRequest(request) : null;
      if (fromSession) return fromSession;
      throw unauthenticated('sign in or send "Authorization: Bearer <API key>"');
    },
  };
}

export function principalOf(user: User): Omit<Principal, 'via'> {
  return { userId: user.id, email: user.email, role: user.role, customerId: user.customerId };
}

/** The stored limits; an action outside the vocabulary (the CHECK forbids it) would only narrow. */
function limitsOf(key: {
  serviceId: string | null;
  customerId: string | null;
  actions: string[];
}): KeyLimits {
  const actions = key.actions.filter((a): a is KeyAction => (KEY_ACTIONS as readonly string[]).includes(a));
  return {
    serviceId: key.serviceId,
    customerId: key.customerId,
    // An empty list means "not limited by action"; a list whose every entry is unknown must not.
    actions: key.actions.length === 0 ? null : actions,
  };
}

/** last_used_at is recorded at most about once a minute per key. */
export const LAST_USED_RESOLUTION_MS = 60_000;

function isStale(lastUsedAt: Date | null, now: Date): boolean {
  return lastUsedAt === null || now.getTime() - lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS;
}

function unauthenticated(message: string): DomainError {
  return new DomainError('unauthenticated', message);
}
