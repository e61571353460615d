import { Redis, type RedisOptions } from 'ioredis';

/**
 * BullMQ workers need maxRetriesPerRequest: null (blocking commands must wait out a Redis restart);
 * request-path clients fail fast instead so the API can answer 503.
 */
export function createRedis(
  url: string,
  role: 'worker' | 'request',
  onError: (error: Error) => void = () => undefined,
): Redis {
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: true }
      : { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000, commandTimeout: 3000 };
  const redis = new Redis(url, { ...options, retryStrategy: (times) => Math.min(times * 200, 2000) });
  // Without a listener ioredis prints every failed reconnect; callers log them their own way.
  redis.on('error', onError);
  return redis;
}

/** ioredis errors that mean "Redis is not reachable right now" rather than a bad command. */
export function isRedisUnavailable(error: unknown): boolean {
  const text = String((error as { message?: string } | null)?.message ?? error);
  return /enableOfflineQueue|Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|Command timed out|max retries per request|Stream isn't writeable/i.test(
    text,
  );
}
