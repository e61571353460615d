import type { Db } from '../client.js';
import type { ServiceEvent } from '../generated/client.ts';

export type EventsStore = ReturnType<typeof createEventsStore>;

export function createEventsStore(db: Db) {
  return {
    /** Newest first; the caller has already checked the service is visible to the principal. */
    async listForService(
      serviceId: string,
      page: { page: number; perPage: number },
    ): Promise<{ rows: ServiceEvent[]; total: number }> {
      const where = { serviceId };
      const [rows, total] = await Promise.all([
        db.serviceEvent.findMany({
          where,
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          skip: (page.page - 1) * page.perPage,
          take: page.perPage,
        }),
        db.serviceEvent.count({ where }),
      ]);
      return { rows, total };
    },
  };
}
