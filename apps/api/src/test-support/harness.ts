import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse, RouteOptions } from 'fastify';
import { generateApiKey } from '@hostctl/auth-policy';
import { ApiConfigSchema, loadConfig, type ApiConfig } from '@hostctl/config';
import { createBootstrapStore, type BootstrapStore } from '@hostctl/db';
import type { Role } from '@hostctl/domain';
import { buildApp } from '../app.js';
import { createContainer, type Container } from '../container.js';

export const TEST_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/hostctl_test';

export interface Harness {
  app: FastifyInstance;
  container: Container;
  config: ApiConfig;
  store: BootstrapStore;
  /** Every route as registered, for tests that walk the route table. */
  routes: RouteOptions[];
  /** A fresh customer with a unique name: each test owns its data. */
  customer(): Promise<{ id: string; name: string }>;
  /** A fresh user with an API key; returns the Authorization header value. */
  user(role: Role, customerId?: string | null): Promise<{ id: string; auth: string }>;
  /** POST /api/services as `auth` (a compose busybox service unless overridden); asserts 201. */
  createService(
    auth: string,
    payload?: Record<string, unknown>,
  ): Promise<{ id: string; name: string; url: string; status: string; deploy_job_id: string }>;
  /** Listens on a random loopback port for WebSocket tests; returns host:port. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

export function uniqueName(prefix = 't'): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** Builds the real app against the test database and Redis, with its own queue prefix. */
export async function createHarness(overrides: Partial<Record<string, string>> = {}): Promise<Harness> {
  const config = loadConfig(ApiConfigSchema, {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: TEST_DATABASE_URL,
    SESSION_SECRET: 'test-secret-test-secret-test-secret-0123',
    QUEUE_PREFIX: `test-${randomUUID().slice(0, 8)}`,
    LIFECYCLE_WAIT_MS: '2000',
    // The rate limiter is exercised by its own tests; here it must not throttle the suites.
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '1000000',
    LOG_LEVEL: 'silent',
    // Deterministic whether or not the dashboard was built in this checkout: "not built" (503).
    DASHBOARD_DIR: '/nonexistent/hostctl-dashboard',
    // Ownership checks of custom domains ask the stack's PowerDNS only: never a resolver outside.
    DOMAIN_VERIFICATION_RESOLVER: '127.0.0.1:5300',
    ...overrides,
  });
  const { default: pino } = await import('pino');
  const logger = pino({ level: 'silent' });
  const container = createContainer(config, logger);
  const routes: RouteOptions[] = [];
  const app = await buildApp({
    logger,
    trustProxy: false,
    authenticator: container.authenticator,
    keyLimits: container.keyLimits,
    audit: container.audit,
    plugins: async (instance) => {
      instance.addHook('onRoute', (route) => void routes.push(route));
      await container.plugins(instance);
    },
    routes: container.routes,
  });
  await app.ready();
  // Likewise the default plan's container quota (quota tests give their customers overrides):
  // route-table suites create well over 100 services for one customer.
  // Only in the test database the harness prepares: one pointed elsewhere (the outage tests'
  // unreachable server) is left as it is.
  if (overrides.DATABASE_URL === undefined)
    await container.db.$executeRaw`
      UPDATE quota_plans SET limits = limits || '{"containers": null}'::jsonb WHERE name = 'default'`;
  const store = createBootstrapStore(container.db);
  return {
    app,
    container,
    config,
    store,
    routes,
    async customer() {
      const customer = await store.createCustomer(uniqueName('cust'));
      return { id: customer.id, name: customer.name };
    },
    async user(role, customerId = null) {
      const user = await store.createUser({
        email: `${uniqueName(role)}@example.test`,
        name: `Test ${role}`,
        role,
        customerId,
      });
      const { key, digest } = generateApiKey();
      await store.createApiKey({ userId: user.id, name: 'test', digest, expiresAt: null });
      return { id: user.id, auth: `Bearer ${key}` };
    },
    async createService(auth, payload = {}) {
      const customerId = payload.customer_id ?? (await store.createCustomer(uniqueName('cust'))).id;
      const response = await app.inject({
        method: 'POST',
        url: '/api/services',
        headers: { authorization: auth },
        payload: {
          name: uniqueName('svc'),
          customer_id: customerId,
          ...(payload.deploy_method === undefined
            ? { deploy_method: 'compose', compose: COMPOSE_BUSYBOX }
            : {}),
          ...payload,
        },
      });
      if (response.statusCode !== 201)
        throw new Error(`create failed: ${response.statusCode} ${response.body}`);
      return json(response);
    },
    async listen() {
      await app.listen({ host: '127.0.0.1', port: 0 });
      return `127.0.0.1:${(app.server.address() as { port: number }).port}`;
    },
    async close() {
      await app.close();
      await container.close();
    },
  };
}

export function json<T = Record<string, unknown>>(response: LightMyRequestResponse): T {
  return JSON.parse(response.body) as T;
}

export const COMPOSE_BUSYBOX = `services:
  web:
    image: local/busybox:1
    ports:
      - "8080"
`;
