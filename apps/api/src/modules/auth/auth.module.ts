import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { ApiConfig } from '@hostctl/config';
import {
  createApiKeysStore,
  createCustomersStore,
  createOidcIdentityStore,
  type Db,
  type IdentityStore,
  type KeyTargetsStore,
} from '@hostctl/db';
import type { SessionAuthenticator } from '../../auth/authenticator.js';
import { createSessionAuthenticator } from '../../auth/session-authenticator.js';
import { cookieNames, LOGIN_TTL_SECONDS, registerSessionCookies } from '../../auth/session-cookies.js';
import { createSessionStore, type SessionStore } from '../../auth/session-store.js';
import { registerOriginCheck } from '../../plugins/origin-check.js';
import { registerRateLimit } from '../../plugins/rate-limit.js';
import { registerApiKeyRoutes } from './api-keys.routes.js';
import { createApiKeysService } from './api-keys.service.js';
import { registerAuthRoutes } from './auth.routes.js';
import { createLoginStateStore } from './login-state.store.js';
import { createOidcClient } from './oidc-client.js';
import { createSignInService } from './sign-in.service.js';

export interface AuthModule {
  /** Plugged into createAuthenticator: resolves the session cookie to a principal. */
  sessions: SessionAuthenticator;
  sessionStore: SessionStore;
  /** Cookie decoding, rate limits and the Origin check; must run before access control. */
  plugins: (app: FastifyInstance) => Promise<void>;
  routes: (app: FastifyInstance) => void;
}

/** Everything about sign-in, sessions and API keys, built from the API config. */
export function createAuthModule(deps: {
  config: ApiConfig;
  db: Db;
  redis: Redis;
  identity: IdentityStore;
  /** Where a deploy token's service is looked up when the key is created. */
  keyTargets: Pick<KeyTargetsStore, 'serviceOwner'>;
  log: FastifyBaseLogger;
}): AuthModule {
  const { config, redis, log } = deps;
  assertAuthConfig(config);
  const isProduction = config.NODE_ENV === 'production';
  const publicUrl = config.PUBLIC_URL.replace(/\/+$/, '');
  if (isProduction && !config.COOKIE_SECURE)
    log.warn('COOKIE_SECURE=false in production: session cookies may travel over plain HTTP');

  const cookies = cookieNames(config.COOKIE_SECURE);
  const sessionStore = createSessionStore({
    redis,
    prefix: config.QUEUE_PREFIX,
    ttlSeconds: config.SESSION_TTL_SECONDS,
  });
  const signIn = createSignInService({
    oidc: createOidcClient({
      issuer: config.OIDC_ISSUER,
      clientId: config.OIDC_CLIENT_ID,
      clientSecret: config.OIDC_CLIENT_SECRET,
      redirectUri: config.OIDC_REDIRECT_URI || `${publicUrl}/api/auth/callback`,
      postLogoutRedirectUri: config.OIDC_POST_LOGOUT_REDIRECT_URI || `${publicUrl}/`,
      allowInsecure: !isProduction,
    }),
    loginStates: createLoginStateStore({ redis, prefix: config.QUEUE_PREFIX, ttlSeconds: LOGIN_TTL_SECONDS }),
    sessions: sessionStore,
    identities: createOidcIdentityStore(deps.db),
    users: deps.identity,
    publicUrl,
    unknownUsers: config.OIDC_UNKNOWN_USERS,
  });
  const apiKeys = createApiKeysService({
    store: createApiKeysStore(deps.db),
    services: deps.keyTargets,
    customers: createCustomersStore(deps.db),
  });

  return {
    sessions: createSessionAuthenticator({ sessions: sessionStore, users: deps.identity, cookies }),
    sessionStore,
    plugins: async (app) => {
      await registerSessionCookies(app, {
        secret: config.SESSION_SECRET,
        secure: config.COOKIE_SECURE,
        ttlSeconds: config.SESSION_TTL_SECONDS,
      });
      registerRateLimit(app, {
        redis,
        prefix: config.QUEUE_PREFIX,
        perMinute: config.RATE_LIMIT_PER_MINUTE,
        loginPerMinute: config.RATE_LIMIT_LOGIN_PER_MINUTE,
        authFailuresPerMinute: config.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE,
        log,
      });
      registerOriginCheck(app, {
        publicUrl,
        sessionCookies: [cookies.session, ...(cookies.spec ? [cookies.spec] : [])],
      });
    },
    routes: (app) => {
      registerAuthRoutes(app, { signIn, publicUrl, cookies });
      registerApiKeyRoutes(app, apiKeys);
    },
  };
}

/** Settings that are unsafe in production are refused at start-up, not discovered at sign-in. */
export function assertAuthConfig(config: Pick<ApiConfig, 'NODE_ENV' | 'OIDC_ISSUER' | 'PUBLIC_URL'>): void {
  new URL(config.PUBLIC_URL);
  if (config.NODE_ENV === 'production' && new URL(config.OIDC_ISSUER).protocol !== 'https:') {
    throw new Error(
      'OIDC_ISSUER must be an https:// URL when NODE_ENV=production (http:// is for development only)',
    );
  }
}
