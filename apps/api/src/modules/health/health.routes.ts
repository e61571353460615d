import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Db } from '@hostctl/db';

/** Liveness says the process serves HTTP; readiness says it can reach Postgres and Redis. */
export function registerHealthRoutes(app: FastifyInstance, deps: { db: Db; redis: Redis }): void {
  app.get('/livez', { config: { permission: 'public' } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { permission: 'public' } }, async (_request, reply) => {
    const checks = await Promise.all([
      probe('postgres', () => deps.db.$queryRaw`SELECT 1`),
      probe('redis', () => deps.redis.ping()),
    ]);
    const ready = checks.every((check) => check.ok);
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks });
  });
}

async function probe(name: string, run: () => Promise<unknown>): Promise<{ name: string; ok: boolean }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      run(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), 2000);
      }),
    ]);
    return { name, ok: true };
  } catch {
    return { name, ok: false };
  } finally {
    // Probes run every few seconds: a pending 2 s timer per probe would pile up.
    clearTimeout(timer);
  }
}
