import type { Redis } from 'ioredis';
import { DomainError } from '@hostctl/domain';

/** A slot not refreshed for this long is gone (its API replica died): the bound heals by itself. */
const SLOT_LEASE_MS = 60_000;

// Prunes expired slots of both sets, then adds the session to both only when each is under its
// bound. Answers 0 (added), 1 (service full) or 2 (customer full). One script: atomic across replicas.
const CLAIM = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end
local expires = now + tonumber(ARGV[5])
redis.call('ZADD', KEYS[1], expires, ARGV[2])
redis.call('ZADD', KEYS[2], expires, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 0
`;

export interface ExecSlot {
  /** Keeps the slot while the terminal is open (called on every credential re-check). */
  refresh(): Promise<void>;
  release(): Promise<void>;
}

/**
 * How many terminals are open per service and per customer, across every API replica
 * (docs/jobs.md#terminal): sorted sets of session ids scored by lease expiry in Redis.
 */
export function createExecBounds(deps: {
  redis: Redis;
  prefix: string;
  perService: number;
  perCustomer: number;
}) {
  const { redis } = deps;
  const keysOf = (serviceId: string, customerId: string) => [
    `${deps.prefix}:exec-slots:service:${serviceId}`,
    `${deps.prefix}:exec-slots:customer:${customerId}`,
  ];
  return {
    async claim(sessionId: string, serviceId: string, customerId: string): Promise<ExecSlot> {
      const keys = keysOf(serviceId, customerId);
      const answer = await redis.eval(
        CLAIM,
        2,
        ...keys,
        Date.now(),
        sessionId,
        deps.perService,
        deps.perCustomer,
        SLOT_LEASE_MS,
      );
      if (answer === 1 || answer === 2) {
        const detail =
          answer === 1
            ? `service ${serviceId} has ${deps.perService} terminals open already (EXEC_MAX_PER_SERVICE); close one first`
            : `customer ${customerId} has ${deps.perCustomer} terminals open already (EXEC_MAX_PER_CUSTOMER); close one first`;
        throw new DomainError('rate_limited', detail, { headers: { 'retry-after': '10' } });
      }
      return {
        async refresh() {
          const expires = Date.now() + SLOT_LEASE_MS;
          await redis
            .multi()
            .zadd(keys[0]!, 'XX', expires, sessionId)
            .zadd(keys[1]!, 'XX', expires, sessionId)
            .pexpire(keys[0]!, SLOT_LEASE_MS)
            .pexpire(keys[1]!, SLOT_LEASE_MS)
            .exec();
        },
        async release() {
          await redis.multi().zrem(keys[0]!, sessionId).zrem(keys[1]!, sessionId).exec();
        },
      };
    },
  };
}
