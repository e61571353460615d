import type { AcmeDnsChallengesStore } from '@hostctl/db';
import type { ChallengeDns } from './acme-client.js';
import type { SweepOptions } from './caddy-challenges.js';

export interface RecordedDnsChallenges extends ChallengeDns {
  /** Withdraws the values of orders that no longer run (their worker was killed); answers their names. */
  sweep(options: SweepOptions): Promise<string[]>;
}

/**
 * dns-01 values with a ledger (docs/tls.md#leftover-challenge-records): a value is recorded before
 * it is published and forgotten after it is withdrawn, so one a worker killed mid-order left in
 * PowerDNS (its `finally` never ran) is still known, and the sweep withdraws it once it is older
 * than any order lasts and no order for its name runs on any replica (the advisory lock of the
 * wildcard or of the bare name is free).
 */
export function recordDnsChallenges(
  dns: ChallengeDns,
  ledger: Pick<AcmeDnsChallengesStore, 'record' | 'forget' | 'publishedBefore'>,
  now: () => Date = () => new Date(),
): RecordedDnsChallenges {
  return {
    async add(name, value) {
      await ledger.record(name, value);
      await dns.add(name, value);
    },
    async remove(name, value) {
      await dns.remove(name, value);
      await ledger.forget(name, value);
    },
    async sweep(options) {
      const left = await ledger.publishedBefore(new Date(now().getTime() - options.olderThanMs));
      const removed: string[] = [];
      for (const { name, value } of left) {
        const domain = name.replace(/^_acme-challenge\./, '');
        if ((await options.inFlight(`*.${domain}`)) || (await options.inFlight(domain))) continue;
        await dns.remove(name, value);
        await ledger.forget(name, value);
        removed.push(name);
      }
      return removed;
    },
  };
}
