import type { Db } from '../client.js';

/** A published dns-01 value as the ledger keeps it. */
export interface PublishedDnsChallenge {
  name: string;
  value: string;
  addedAt: Date;
}

/**
 * The ledger of dns-01 values published in the platform's PowerDNS (docs/tls.md): what a worker
 * killed mid-order leaves there is found from it, since nothing in the record itself says who
 * wrote it (another installation on the same zone may have its own value at the same name).
 */
export function createAcmeDnsChallengesStore(db: Db) {
  return {
    async record(name: string, value: string): Promise<void> {
      await db.acmeDnsChallenge.create({ data: { name, value } });
    },
    async forget(name: string, value: string): Promise<void> {
      await db.acmeDnsChallenge.deleteMany({ where: { name, value } });
    },
    /** Values published before `cutoff` and still not withdrawn, oldest first. */
    async publishedBefore(cutoff: Date): Promise<PublishedDnsChallenge[]> {
      return db.acmeDnsChallenge.findMany({
        where: { addedAt: { lt: cutoff } },
        orderBy: { addedAt: 'asc' },
        select: { name: true, value: true, addedAt: true },
        take: 100,
      });
    },
  };
}

export type AcmeDnsChallengesStore = ReturnType<typeof createAcmeDnsChallengesStore>;
