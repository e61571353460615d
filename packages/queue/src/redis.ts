import { Redis, type RedisOptions } from 'ioredis';

/**
 * BullMQ workers need maxRetriesPerRequest: null (blocking commands must wait out a Redis restart);
 * request-path clients fail fast instead so the API can answer 503.
 */
export function createRedis(url: string, role: 'worker' | 'request'): Redis {
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: true }
      : { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000, commandTimeout: 3000 };
  return new Redis(url, { ...options, retryStrategy: (times) => Math.min(times * 200, 2000) });
}
