import { hkdfSync } from 'node:crypto';

/**
 * One 32-byte key per cookie, derived from SESSION_SECRET with HKDF: a session cookie can never be
 * decrypted as a pre-login cookie or the other way round, and no key material is stored anywhere.
 * Here rather than in the API so tools that mint sessions (the bench) derive the same key.
 */
export function deriveCookieKey(secret: string, purpose: 'session' | 'login'): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'hostctl-cookies', `hostctl ${purpose} cookie v1`, 32));
}
