import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { ApiConfig } from '@hostctl/config';
import {
  createCustomersStore,
  createDb,
  createEventsStore,
  createIdentityStore,
  createServicesStore,
  type Db,
} from '@hostctl/db';
import { createProducer, createRedis, type Producer } from '@hostctl/queue';
import { createAuthenticator, type SessionAuthenticator } from './auth/authenticator.js';
import { registerHealthRoutes } from './modules/health/health.routes.js';
import { registerServiceRoutes } from './modules/services/services.routes.js';
import { createServicesService } from './modules/services/services.service.js';
import { loadCatalog } from '@hostctl/templates';
import { registerTemplateRoutes } from './modules/templates/templates.routes.js';
import { createJobQueue, type JobQueue } from './queue-client.js';

export interface Container {
  config: ApiConfig;
  db: Db;
  redis: Redis;
  producer: Producer;
  jobs: JobQueue;
  authenticator: ReturnType<typeof createAuthenticator>;
  routes: (app: FastifyInstance) => Promise<void>;
  close(): Promise<void>;
}

/** The composition root: every dependency is built here once and passed down explicitly. */
export function createContainer(config: ApiConfig, log: FastifyBaseLogger): Container {
  const db = createDb({ url: config.DATABASE_URL });
  const redis = createRedis(config.REDIS_URL, 'request');
  const queueRedis = createRedis(config.REDIS_URL, 'worker');
  const producer = createProducer(redis, config.QUEUE_PREFIX);
  const jobs = createJobQueue({
    producer,
    connection: queueRedis,
    prefix: config.QUEUE_PREFIX,
    lifecycleWaitMs: config.LIFECYCLE_WAIT_MS,
    log,
  });
  const identity = createIdentityStore(db);
  const sessions: SessionAuthenticator | undefined = undefined;
  const authenticator = createAuthenticator({ identity, ...(sessions ? { sessions } : {}) });
  const catalog = loadCatalog();
  const services = createServicesService({
    services: createServicesStore(db),
    customers: createCustomersStore(db),
    events: createEventsStore(db),
    jobs,
    catalog,
    publicUrl: (name) => `${config.APPS_SCHEME}://${name}.${config.APPS_DOMAIN}`,
  });

  return {
    config,
    db,
    redis,
    producer,
    jobs,
    authenticator,
    async routes(app) {
      registerHealthRoutes(app, { db, redis });
      registerServiceRoutes(app, services);
      registerTemplateRoutes(app, catalog);
    },
    async close() {
      await jobs.close();
      await producer.close();
      await Promise.allSettled([db.$disconnect(), redis.quit(), queueRedis.quit()]);
    },
  };
}
