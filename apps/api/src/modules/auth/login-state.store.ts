import { timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';

/** What a started login needs at the callback; kept server-side, never in the browser. */
export interface LoginState {
  /** Must equal the value in the pre-login cookie of the browser that returns. */
  binding: string;
  nonce: string;
  codeVerifier: string;
  redirect: string;
}

export type LoginStateStore = ReturnType<typeof createLoginStateStore>;

/**
 * Pending logins keyed by their OAuth `state`, so several tabs of one browser can sign in at once.
 * Each state is consumed exactly once: a replayed callback finds nothing.
 */
export function createLoginStateStore(deps: { redis: Redis; prefix: string; ttlSeconds: number }) {
  const key = (state: string) => `${deps.prefix}:auth:login:${state}`;
  return {
    async save(state: string, value: LoginState): Promise<void> {
      await deps.redis.set(key(state), JSON.stringify(value), 'EX', deps.ttlSeconds);
    },

    /**
     * Returns and deletes the login for `state` if it was started by the browser holding `binding`.
     * A foreign binding leaves the entry untouched, so a stranger who saw the URL cannot burn it.
     */
    async take(state: string, binding: string): Promise<LoginState | null> {
      const raw = await deps.redis.get(key(state));
      const value = raw === null ? null : parse(raw);
      if (!value || !sameSecret(value.binding, binding)) return null;
      // GETDEL decides between two racing callbacks: only one of them gets the entry.
      return (await deps.redis.getdel(key(state))) === null ? null : value;
    },
  };
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function parse(raw: string): LoginState | null {
  try {
    const value = JSON.parse(raw) as Partial<LoginState>;
    const fields = [value.binding, value.nonce, value.codeVerifier, value.redirect];
    return fields.every((field) => typeof field === 'string') ? (value as LoginState) : null;
  } catch {
    return null;
  }
}
