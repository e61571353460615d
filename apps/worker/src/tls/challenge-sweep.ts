import type { AdvisoryLocks } from '@hostctl/db';
import type { Logger } from 'pino';
import { messageOf } from '../pipeline/step-errors.js';
import type { SweepOptions } from './caddy-challenges.js';

/**
 * Longer than any order takes: the ACME client polls an authorization, then the order, at most
 * 60 times a second apart each (acme-client.ts), with 10 s per request. A route (or a dns-01
 * value) older than this whose domain has no order running is a leftover.
 */
export const CHALLENGE_ROUTE_MAX_AGE_MS = 10 * 60 * 1000;

/** Where an order publishes its answers: Caddy's http-01 routes, PowerDNS's dns-01 values. */
interface ChallengeLeftovers {
  sweep(options: SweepOptions): Promise<string[]>;
}

export interface ChallengeSweepDeps {
  leftovers: ChallengeLeftovers[];
  locks: Pick<AdvisoryLocks, 'tryAcquire'>;
  logger: Logger;
  olderThanMs?: number;
}

/**
 * Removes the http-01 routes and dns-01 values a worker killed mid-order left in Caddy and
 * PowerDNS (docs/tls.md): its `finally` never ran, and Caddy would answer the used token until it
 * restarts, PowerDNS serve the stale TXT value for ever. An order holds the advisory
 * lock `hostctl:tls:<domain>` (certificate-order.ts) while it runs, on whichever replica: a route
 * whose lock is free and that is older than any order lasts belongs to no order. Run by every
 * replica after each certificate round; a sweep that fails is retried by the next round.
 */
export function createChallengeSweep(deps: ChallengeSweepDeps) {
  const inFlight = async (domain: string): Promise<boolean> => {
    const lease = await deps.locks.tryAcquire(`hostctl:tls:${domain}`);
    if (!lease) return true;
    await lease.release();
    return false;
  };
  return {
    async runOnce(): Promise<string[]> {
      const removed: string[] = [];
      for (const leftovers of deps.leftovers) {
        const swept = await leftovers
          .sweep({ olderThanMs: deps.olderThanMs ?? CHALLENGE_ROUTE_MAX_AGE_MS, inFlight })
          .catch((error: unknown) => {
            deps.logger.warn(
              { err: messageOf(error) },
              'tls: challenge sweep failed; the next round retries',
            );
            return [];
          });
        removed.push(...swept);
      }
      if (removed.length > 0)
        deps.logger.info({ challenges: removed }, 'tls: removed challenges left by an interrupted order');
      return removed;
    },
  };
}
