import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { digestApiKey } from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import { readSessionSecret } from '../auth/session-cookies.js';
import { sessionHandle } from '../auth/session-store.js';

export interface RateLimitOptions {
  redis: Redis;
  prefix: string;
  perMinute: number;
  /** Per IP, for the sign-in endpoints, which anyone can call. */
  loginPerMinute: number;
  /** Per IP: after this many 401s for bearer keys, further key requests get 429 until the window ends. */
  authFailuresPerMinute: number;
  log: FastifyBaseLogger;
  windowMs?: number;
  now?: () => number;
}

const SIGN_IN_ROUTES = new Set(['/api/auth/login', '/api/auth/callback']);

/**
 * Fixed-window rate limits in Redis (INCR + PEXPIRE per bucket per window), so every replica shares
 * the counts. Buckets: the API key (by digest), else the session, else the client IP. Runs before
 * authentication, so a flood costs one Redis round trip and no database work. When Redis is
 * unreachable, requests are let through: losing rate limiting must not take the API down.
 */
export function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): void {
  const windowMs = options.windowMs ?? 60_000;
  const limiter = createFixedWindow({ ...options, windowMs, now: options.now ?? Date.now });

  app.addHook('onRequest', async (request) => {
    if (!request.url.startsWith('/api/')) return;
    const route = request.routeOptions.url;
    if (route !== undefined && SIGN_IN_ROUTES.has(route)) {
      return limiter.enforce(`sign-in:${request.ip}`, options.loginPerMinute, limiter.hit);
    }
    const token = bearerToken(request);
    if (token !== null) {
      // One round trip: read the IP's failure count and count the key together.
      const [failures, uses] = await limiter.peekAndHit(
        `auth-failures:${request.ip}`,
        `key:${digestApiKey(token).slice(0, 32)}`,
      );
      limiter.check(failures, options.authFailuresPerMinute);
      return limiter.check(uses, options.perMinute);
    }
    const secret = readSessionSecret(request);
    if (secret !== null)
      return limiter.enforce(`session:${sessionHandle(secret).slice(0, 32)}`, options.perMinute, limiter.hit);
    return limiter.enforce(`ip:${request.ip}`, options.perMinute, limiter.hit);
  });

  // Counted after the fact: only the response knows whether the key was accepted.
  app.addHook('onResponse', async (request, reply) => {
    if (
      reply.statusCode === 401 &&
      request.headers.authorization !== undefined &&
      request.url.startsWith('/api/')
    ) {
      await limiter.hit(`auth-failures:${request.ip}`);
    }
  });
}

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header === undefined) return null;
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] ?? header;
}

type Counter = (bucket: string) => Promise<number | null>;

/** Shared by the push webhook receiver, whose limits are per hook and per source address. */
export function createFixedWindow(
  options: Pick<RateLimitOptions, 'redis' | 'prefix' | 'log'> & { windowMs: number; now: () => number },
) {
  const { redis, windowMs, now } = options;
  let lastWarning = 0;
  const keyOf = (bucket: string, window: number) => `${options.prefix}:rl:${bucket}:${window}`;

  function failOpen(error: unknown): null {
    // One warning per 30 s: an outage must not turn into a log flood.
    if (now() - lastWarning > 30_000) {
      lastWarning = now();
      options.log.warn({ err: error }, 'rate limiting skipped: Redis is unavailable');
    }
    return null;
  }

  /** Counts one request in the current window; returns the new count (null when Redis failed). */
  const hit: Counter = async (bucket) => {
    const key = keyOf(bucket, Math.floor(now() / windowMs));
    try {
      const results = await redis
        .multi()
        .incr(key)
        .pexpire(key, windowMs * 2)
        .exec();
      const [error, count] = results?.[0] ?? [new Error('empty transaction result'), null];
      if (error) throw error;
      return Number(count);
    } catch (error) {
      return failOpen(error);
    }
  };

  /**
   * Reads the gate's count (the request itself counted +1, not added) and counts one request in
   * `bucket`, in one pipeline.
   */
  const peekAndHit = async (gate: string, bucket: string): Promise<[number | null, number | null]> => {
    const window = Math.floor(now() / windowMs);
    const key = keyOf(bucket, window);
    try {
      const results = await redis
        .multi()
        .get(keyOf(gate, window))
        .incr(key)
        .pexpire(key, windowMs * 2)
        .exec();
      const [gateError, gateValue] = results?.[0] ?? [new Error('empty transaction result'), null];
      const [hitError, hitValue] = results?.[1] ?? [new Error('empty transaction result'), null];
      const failure = gateError ?? hitError;
      if (failure) throw failure instanceof Error ? failure : new Error(String(failure));
      return [gateValue === null ? 1 : Number(gateValue) + 1, Number(hitValue)];
    } catch (error) {
      return [failOpen(error), null];
    }
  };

  /** Throws 429 with Retry-After when a count is over its limit (null: Redis failed, let it pass). */
  function check(current: number | null, limit: number): void {
    if (current === null || current <= limit) return;
    const at = now();
    const retryAfter = Math.max(1, Math.ceil(((Math.floor(at / windowMs) + 1) * windowMs - at) / 1000));
    throw new DomainError('rate_limited', `too many requests; retry in ${retryAfter} s`, {
      headers: { 'retry-after': String(retryAfter) },
    });
  }

  return {
    hit,
    peekAndHit,
    check,
    async enforce(bucket: string, limit: number, count: Counter): Promise<void> {
      check(await count(bucket), limit);
    },
  };
}
