import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Configuration, JWK } from 'oidc-provider';
import type { AccountBook } from './accounts.js';
import { logoutPage, messagePage } from './pages.js';

export interface ClientSettings {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
}

/** Scopes this provider knows, each with the claims it releases. */
const CLAIMS = {
  openid: ['sub'],
  email: ['email', 'email_verified'],
  profile: ['name'],
  hostctl: ['role', 'customer'],
};

/**
 * oidc-provider configuration for local development and tests: a real password check (our own
 * interaction routes, not devInteractions), automatic consent for the one first-party client,
 * PKCE required, RP-initiated logout, and email/name in the ID token (conformIdTokenClaims: false).
 * Signing and cookie keys are generated at every start: nothing here is a secret worth keeping.
 */
export function providerConfiguration(accounts: AccountBook, client: ClientSettings): Configuration {
  return {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: client.redirectUris,
        post_logout_redirect_uris: client.postLogoutRedirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: CLAIMS,
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: (ctx, form) => {
          ctx.type = 'html';
          ctx.body = logoutPage(form, ctx.host);
        },
        postLogoutSuccessSource: (ctx) => {
          ctx.type = 'html';
          ctx.body = messagePage('Signed out', {
            result: 'You are signed out of the development identity provider.',
          });
        },
      },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      const account = accounts.bySub(sub);
      if (!account) return undefined;
      return {
        accountId: account.sub,
        claims: () => ({
          sub: account.sub,
          email: account.email,
          email_verified: true,
          name: account.name,
          ...(account.role ? { role: account.role } : {}),
          ...(account.customer ? { customer: account.customer } : {}),
        }),
      };
    },
    // First-party client: consent is implied, so a grant covering every scope is created on first use.
    async loadExistingGrant(ctx) {
      const { oidc } = ctx;
      if (!oidc.client || !oidc.session?.accountId) return undefined;
      const existing = oidc.result?.consent?.grantId ?? oidc.session.grantIdFor(oidc.client.clientId);
      if (existing) return oidc.provider.Grant.find(existing);
      const grant = new oidc.provider.Grant({
        clientId: oidc.client.clientId,
        accountId: oidc.session.accountId,
      });
      grant.addOIDCScope(Object.keys(CLAIMS).join(' '));
      await grant.save();
      return grant;
    },
    renderError(ctx, out) {
      ctx.type = 'html';
      ctx.body = messagePage('Sign-in error', out as unknown as Record<string, string>);
    },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    jwks: { keys: [signingKey()] },
  };
}

function signingKey(): JWK {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' }) as JWK;
  return { ...jwk, kid: `dev-${randomBytes(6).toString('hex')}`, alg: 'RS256', use: 'sig' };
}
