import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * A Redis lease: SET NX PX to take it, compare-and-PEXPIRE to keep it, compare-and-DEL to give it
 * back. The random token is also the fencing value: the log writer's script refuses to write
 * for a token that no longer holds the key, so a paused or partitioned holder cannot ship twice.
 */
export interface RedisLease {
  readonly key: string;
  readonly token: string;
  readonly ttlMs: number;
  tryAcquire(): Promise<boolean>;
  /** False when the lease is no longer ours (expired and maybe taken by another holder). */
  renew(): Promise<boolean>;
  release(): Promise<void>;
}

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export function createRedisLease(redis: Redis, key: string, ttlMs: number): RedisLease {
  // A fresh token per lease: a holder that lost the key and takes it again is a new holder.
  const token = randomUUID();
  return {
    key,
    token,
    ttlMs,
    async tryAcquire() {
      return (await redis.set(key, token, 'PX', ttlMs, 'NX')) === 'OK';
    },
    async renew() {
      return Number(await redis.eval(RENEW, 1, key, token, String(ttlMs))) === 1;
    },
    async release() {
      await redis.eval(RELEASE, 1, key, token);
    },
  };
}
