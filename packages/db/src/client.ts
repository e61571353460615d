import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/client.ts';

export type Db = InstanceType<typeof PrismaClient>;

export interface DbOptions {
  url: string;
  /** Pool size per process; keep small: api and worker replicas multiply it. */
  max?: number;
}

export function createDb(options: DbOptions): Db {
  const adapter = new PrismaPg({
    connectionString: options.url,
    max: options.max ?? 10,
    // Fail fast when Postgres is unreachable instead of hanging the request (maps to 503).
    connectionTimeoutMillis: 3000,
  });
  return new PrismaClient({ adapter });
}
