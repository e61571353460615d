import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { Type } from 'typebox';
import { customerScope, generateApiKey } from '@hostctl/auth-policy';
import { ApiConfigSchema, loadConfig, type ApiConfig } from '@hostctl/config';
import { createBootstrapStore, type BootstrapStore } from '@hostctl/db';
import type { Role } from '@hostctl/domain';
import { buildApp } from '../../../app.js';
import { createContainer, type Container } from '../../../container.js';
import { principalOf } from '../../../plugins/access.js';
import { TEST_DATABASE_URL } from '../../../test-support/harness.js';
import { DEV_IDP_CLIENT_SECRET, type TestAccount } from './dev-idp-process.js';

export interface AuthHarness {
  app: FastifyInstance;
  container: Container;
  config: ApiConfig;
  store: BootstrapStore;
  close(): Promise<void>;
}

/** The test API's external URL; with app.inject nothing listens there, it only names the origin. */
export const TEST_PUBLIC_URL = 'http://127.0.0.1:39999';
export const TEST_CALLBACK = `${TEST_PUBLIC_URL}/api/auth/callback`;
export const TEST_ORIGIN = new URL(TEST_PUBLIC_URL).origin;

/**
 * The real container and app (session cookies, rate limits, Origin check, access control) against
 * the test database, Redis and a running dev IdP. Each harness has its own Redis key prefix, so
 * two harnesses with the same prefix behave like two replicas of one installation.
 */
export async function createAuthHarness(env: Record<string, string>): Promise<AuthHarness> {
  const config = loadConfig(ApiConfigSchema, {
    NODE_ENV: 'test',
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    SESSION_SECRET: 'auth-test-secret-auth-test-secret-0123456789',
    // The test database's data keys are wrapped with the dev stack's key (.data/env.test).
    SECRETS_KEK: process.env.SECRETS_KEK ?? '',
    SECRETS_KEK_ID: process.env.SECRETS_KEK_ID ?? 'k1',
    QUEUE_PREFIX: `test-auth-${randomUUID().slice(0, 8)}`,
    PUBLIC_URL: TEST_PUBLIC_URL,
    COOKIE_SECURE: 'false',
    OIDC_CLIENT_SECRET: DEV_IDP_CLIENT_SECRET,
    RATE_LIMIT_PER_MINUTE: '100000',
    RATE_LIMIT_LOGIN_PER_MINUTE: '100000',
    RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '100000',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const logger = pino({ level: 'silent' });
  const container = createContainer(config, logger);
  const app = await buildApp({
    logger,
    trustProxy: false,
    authenticator: container.authenticator,
    keyLimits: container.keyLimits,
    audit: container.audit,
    plugins: container.plugins,
    routes: async (instance) => {
      await container.routes(instance);
      registerProbeRoutes(instance);
    },
  });
  await app.ready();
  await untilReady(container.redis);
  return {
    app,
    container,
    config,
    store: createBootstrapStore(container.db),
    async close() {
      await app.close();
      await container.close();
    },
  };
}

/** Routes that only report what access control decided, to test keys and sessions in isolation. */
function registerProbeRoutes(app: FastifyInstance): void {
  const Probe = Type.Object({ role: Type.String(), via: Type.String(), scope: Type.String() });
  const describe = (request: Parameters<typeof principalOf>[0]) => {
    const principal = principalOf(request);
    const scope = customerScope(principal);
    return {
      role: principal.role,
      via: principal.via,
      scope: scope.kind === 'customer' ? `customer:${scope.customerId}` : scope.kind,
    };
  };
  app.get(
    '/api/test-probe/read',
    { config: { permission: 'services:read' }, schema: { response: { 200: Probe } } },
    describe,
  );
  app.post(
    '/api/test-probe/write',
    { config: { permission: 'services:create' }, schema: { response: { 200: Probe } } },
    describe,
  );
}

/** The request-role client refuses commands until connected; tests must not race its start. */
async function untilReady(redis: Redis): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (redis.status !== 'ready') {
    if (Date.now() > deadline) throw new Error('redis did not become ready');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function testAccount(label: string): TestAccount {
  const id = randomUUID().slice(0, 8);
  return { email: `${label}-${id}@auth.example.test`, password: `pw-${label}-${id}`, name: `Test ${label}` };
}

/** Provisions a user (and optionally a customer) matching a provider account. */
export async function provision(
  store: BootstrapStore,
  account: TestAccount,
  role: Role,
  customerId: string | null = null,
) {
  return store.createUser({ email: account.email, name: account.name, role, customerId });
}

/** A key stored straight in the database, for tests that are not about key creation. */
export async function seedKey(store: BootstrapStore, userId: string, expiresAt: Date | null = null) {
  const { key, digest } = generateApiKey();
  const row = await store.createApiKey({ userId, name: 'seeded', digest, expiresAt });
  return { id: row.id, auth: `Bearer ${key}` };
}

export const uniqueCustomer = (store: BootstrapStore) =>
  store.createCustomer(`auth-${randomUUID().slice(0, 8)}`);
