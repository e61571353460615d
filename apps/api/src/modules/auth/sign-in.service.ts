import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import type { Principal } from '@hostctl/auth-policy';
import { toDomainError, type IdentityStore, type OidcIdentityStore } from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import { sessionsUnavailable } from '../../auth/session-authenticator.js';
import type { SessionStore } from '../../auth/session-store.js';
import type { LoginStateStore } from './login-state.store.js';
import type { OidcClient } from './oidc-client.js';
import { toUserProfile, type UserProfile } from '../../http/user-profile.js';
import { checkRedirectTarget } from './redirect-target.js';
import { resolveUser, type UnknownUsersPolicy } from './user-linking.js';

export interface SignInServiceDeps {
  oidc: OidcClient;
  loginStates: LoginStateStore;
  sessions: Pick<SessionStore, 'create' | 'find' | 'remove' | 'removeBySecret'>;
  identities: OidcIdentityStore;
  users: Pick<IdentityStore, 'findUserById'>;
  publicUrl: string;
  unknownUsers: UnknownUsersPolicy;
  now?: () => Date;
}

export type SignInService = ReturnType<typeof createSignInService>;

/** The OIDC Authorization Code flow with PKCE, state and nonce, ending in a server-side session. */
export function createSignInService(deps: SignInServiceDeps) {
  const now = deps.now ?? (() => new Date());

  /** Redis failures on the sign-in path are a 503, not a 500. */
  async function redis<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw sessionsUnavailable(error);
    }
  }

  return {
    /**
     * Starts a login: fresh state, nonce and PKCE verifier stored server-side under the state,
     * bound to this browser by `binding` (reused when the browser already holds one, so two tabs
     * signing in at once do not break each other).
     */
    async startLogin(
      redirect: string | undefined,
      existingBinding: string | null,
    ): Promise<{ url: string; binding: string }> {
      const target = checkRedirectTarget(redirect, deps.publicUrl);
      const state = client.randomState();
      const nonce = client.randomNonce();
      const codeVerifier = client.randomPKCECodeVerifier();
      const url = await deps.oidc.authorizationUrl({
        state,
        nonce,
        codeChallenge: await client.calculatePKCECodeChallenge(codeVerifier),
      });
      const binding = existingBinding ?? randomBytes(32).toString('base64url');
      await redis(() => deps.loginStates.save(state, { binding, nonce, codeVerifier, redirect: target }));
      return { url: url.href, binding };
    },

    /**
     * Completes a login. Any failure leaves no session behind; the browser's previous session, if
     * any, is ended so that only the freshly issued id is ever signed in (no session fixation).
     */
    async finishLogin(input: {
      state: string | undefined;
      rawQuery: string;
      binding: string | null;
      previousSecret: string | null;
    }): Promise<{ secret: string; redirect: string; userId: string }> {
      if (!input.binding) {
        throw new DomainError(
          'validation_failed',
          'this browser did not start a sign-in (the pre-login cookie is missing or expired); start again',
        );
      }
      if (!input.state)
        throw new DomainError('validation_failed', 'the callback carries no state; start the sign-in again');
      const binding = input.binding;
      const state = input.state;
      const login = await redis(() => deps.loginStates.take(state, binding));
      if (!login) {
        throw new DomainError(
          'validation_failed',
          'this sign-in is unknown, expired, already completed or was started in another browser; start again',
        );
      }
      const identity = await deps.oidc.exchangeCode(input.rawQuery, {
        state,
        nonce: login.nonce,
        codeVerifier: login.codeVerifier,
      });
      const user = await resolveUser(deps.identities, identity, deps.unknownUsers).catch((error: unknown) => {
        throw toDomainError(error);
      });
      const previous = input.previousSecret;
      if (previous) await redis(() => deps.sessions.removeBySecret(previous));
      const { secret } = await redis(() =>
        deps.sessions.create({ userId: user.id, createdAt: now().toISOString(), idToken: identity.idToken }),
      );
      return { secret, redirect: login.redirect, userId: user.id };
    },

    /** The caller's profile, read fresh (the principal carries no name or creation time). */
    async profile(principal: Principal): Promise<UserProfile> {
      const user = await deps.users.findUserById(principal.userId).catch((error: unknown) => {
        throw toDomainError(error);
      });
      if (!user) throw new DomainError('unauthenticated', 'your account no longer exists');
      return toUserProfile(user);
    },

    /** Ends this session only; the provider's session is ended by the browser following logout_url. */
    async logout(principal: Principal): Promise<{ message: string; logout_url: string | null }> {
      const handle = principal.sessionId;
      if (principal.via !== 'session' || !handle) {
        throw new DomainError(
          'forbidden',
          'sign-out ends a browser session; an API key is revoked with DELETE /api/auth/api-keys/:id',
        );
      }
      const record = await redis(() => deps.sessions.find(handle));
      await redis(() => deps.sessions.remove(handle, principal.userId));
      return { message: 'Signed out', logout_url: await deps.oidc.endSessionUrl(record?.idToken ?? null) };
    },
  };
}
