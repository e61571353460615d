import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis } from '@hostctl/queue';
import type { Redis } from 'ioredis';
import { registerErrorHandlers } from './errors.js';
import { fingerprintKey, registerIdempotency } from './idempotency.js';

// The timing cases (a duplicate while the first is still running) need a handler the test can hold
// open, so this builds a small app with the real plugin and real Redis around a controllable route.
let redis: Redis;
let app: FastifyInstance;
let release: () => void = () => undefined;
let outcome: 'ok' | 'fail' = 'ok';
let calls = 0;

beforeAll(async () => {
  redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', 'request');
  // Request-path clients have no offline queue: wait for the connection before the first command.
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  app = Fastify();
  registerErrorHandlers(app);
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    request.principal = {
      userId: 'timing-user',
      email: 'u@example.test',
      role: 'operator',
      customerId: null,
      via: 'api_key',
    };
  });
  registerIdempotency(app, {
    redis,
    prefix: `test-${randomUUID().slice(0, 8)}`,
    fingerprintKey: fingerprintKey(randomUUID()),
    waitMs: 300,
    pollMs: 20,
  });
  app.post(
    '/work',
    { config: { permission: 'services:create', idempotent: true } },
    async (_request, reply) => {
      calls += 1;
      await new Promise<void>((resolve) => (release = resolve));
      if (outcome === 'fail') return reply.status(500).send({ failed: true });
      return reply.status(201).send({ call: calls });
    },
  );
  await app.ready();
});
afterAll(async () => {
  await app.close();
  redis.disconnect();
});

// inject() is lazy until awaited; Promise.resolve starts the request now.
const send = (key: string) =>
  Promise.resolve(
    app.inject({ method: 'POST', url: '/work', headers: { 'idempotency-key': key }, payload: { a: 1 } }),
  );

async function untilCalls(n: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (calls < n) {
    if (Date.now() > deadline) throw new Error(`handler was called ${calls} times, expected ${n}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('a duplicate while the first request is in flight', () => {
  it('answers 409 idempotency_in_progress with Retry-After when the first outlasts the wait', async () => {
    outcome = 'ok';
    const key = randomUUID();
    const start = calls;
    const first = send(key);
    await untilCalls(start + 1);
    const duplicate = await send(key);
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.headers['retry-after']).toBe('1');
    expect(duplicate.json()).toMatchObject({ code: 'idempotency_in_progress' });
    release();
    expect((await first).statusCode).toBe(201);
  });

  it('waits for the first and replays its response when it finishes in time', async () => {
    outcome = 'ok';
    const key = randomUUID();
    const start = calls;
    const first = send(key);
    await untilCalls(start + 1);
    const duplicate = send(key);
    setTimeout(() => release(), 50);
    const [a, b] = await Promise.all([first, duplicate]);
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(b.json()).toEqual(a.json());
    expect(calls).toBe(start + 1);
  });

  it('lets a waiting duplicate run when the first fails', async () => {
    outcome = 'fail';
    const key = randomUUID();
    const start = calls;
    const first = send(key);
    await untilCalls(start + 1);
    const duplicate = send(key);
    release();
    expect((await first).statusCode).toBe(500);
    await untilCalls(start + 2);
    outcome = 'ok';
    release();
    const second = await duplicate;
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
  });
});
