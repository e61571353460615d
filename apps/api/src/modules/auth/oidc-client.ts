import * as client from 'openid-client';
import { DomainError } from '@hostctl/domain';

/** The provider-verified facts a sign-in is decided on. */
export interface OidcIdentity {
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  idToken: string | null;
}

export interface OidcClient {
  authorizationUrl(input: { state: string; nonce: string; codeChallenge: string }): Promise<URL>;
  /** Exchanges the code from the callback and validates the ID token (signature, iss, aud, nonce). */
  exchangeCode(
    callbackQuery: string,
    checks: { state: string; nonce: string; codeVerifier: string },
  ): Promise<OidcIdentity>;
  /** RP-initiated logout URL, or null when the provider has no end-session endpoint or is unreachable. */
  endSessionUrl(idToken: string | null): Promise<string | null>;
}

export interface OidcClientOptions {
  issuer: string;
  clientId: string;
  /** Empty: a public client authenticated by PKCE alone. */
  clientSecret: string;
  redirectUri: string;
  postLogoutRedirectUri: string;
  /** http:// issuers are for development only; production refuses them at start-up. */
  allowInsecure: boolean;
  discoveryAttempts?: number;
  timeoutSeconds?: number;
}

const SCOPE = 'openid email profile';

/**
 * openid-client v6 against one issuer. Discovery is lazy and retried: the API must start (and
 * answer everything but sign-in) while the provider is still down, and recover once it is up.
 */
export function createOidcClient(options: OidcClientOptions): OidcClient {
  const attempts = options.discoveryAttempts ?? 3;
  const timeout = options.timeoutSeconds ?? 5;
  let pending: Promise<client.Configuration> | undefined;

  async function discoverOnce(): Promise<client.Configuration> {
    const auth = options.clientSecret ? client.ClientSecretBasic(options.clientSecret) : client.None();
    return client.discovery(new URL(options.issuer), options.clientId, undefined, auth, {
      timeout,
      ...(options.allowInsecure ? { execute: [client.allowInsecureRequests] } : {}),
    });
  }

  async function discover(): Promise<client.Configuration> {
    let last: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        return await discoverOnce();
      } catch (error) {
        last = error;
        if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
      }
    }
    throw new DomainError('dependency_unavailable', 'the identity provider is unreachable; retry shortly', {
      headers: { 'retry-after': '5' },
      cause: last,
    });
  }

  function configuration(): Promise<client.Configuration> {
    // A failed discovery is forgotten so the next sign-in tries again.
    pending ??= discover().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  }

  return {
    async authorizationUrl({ state, nonce, codeChallenge }) {
      return client.buildAuthorizationUrl(await configuration(), {
        redirect_uri: options.redirectUri,
        scope: SCOPE,
        response_type: 'code',
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
        state,
        nonce,
      });
    },

    async exchangeCode(callbackQuery, checks) {
      const config = await configuration();
      // The URL is rebuilt from the configured redirect URI, never from the request's Host header.
      const currentUrl = new URL(options.redirectUri);
      currentUrl.search = callbackQuery;
      let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
      try {
        tokens = await client.authorizationCodeGrant(config, currentUrl, {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          idTokenExpected: true,
        });
      } catch (error) {
        throw toSignInError(error);
      }
      const claims = tokens.claims();
      if (!claims) throw new DomainError('validation_failed', 'the identity provider returned no ID token');
      return {
        issuer: claims.iss,
        subject: claims.sub,
        email: typeof claims.email === 'string' ? claims.email : null,
        emailVerified: claims.email_verified === true,
        name: typeof claims.name === 'string' ? claims.name : null,
        idToken: tokens.id_token ?? null,
      };
    },

    async endSessionUrl(idToken) {
      try {
        const config = await configuration();
        if (!config.serverMetadata().end_session_endpoint) return null;
        const parameters: Record<string, string> = {
          client_id: options.clientId,
          post_logout_redirect_uri: options.postLogoutRedirectUri,
        };
        if (idToken) parameters.id_token_hint = idToken;
        return client.buildEndSessionUrl(config, parameters).href;
      } catch {
        // The local session is gone either way; the provider's own session simply stays.
        return null;
      }
    },
  };
}

/** Errors of the code exchange say what failed without echoing tokens or secrets. */
function toSignInError(error: unknown): DomainError {
  if (error instanceof client.AuthorizationResponseError) {
    return new DomainError(
      'validation_failed',
      `the identity provider refused the sign-in (${error.error}); start again`,
      {
        cause: error,
      },
    );
  }
  if (error instanceof client.ResponseBodyError) {
    return new DomainError(
      'validation_failed',
      `the identity provider rejected the code exchange (${error.error}); start again`,
      {
        cause: error,
      },
    );
  }
  if (error instanceof client.ClientError) {
    // oauth4webapi's messages name the failed check (e.g. the ID token's "nonce"), never a value.
    const reason = error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
    return new DomainError(
      'validation_failed',
      `the sign-in response failed validation (${reason}); start again`,
      { cause: error },
    );
  }
  return new DomainError('dependency_unavailable', 'the identity provider is unreachable; retry shortly', {
    headers: { 'retry-after': '5' },
    cause: error,
  });
}
