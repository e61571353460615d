import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

// Dependencies down: requests fail fast with 503 + Retry-After instead of hanging or a bare 500.
describe('PostgreSQL unreachable', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/nothing' });
  });
  afterAll(async () => h.close());

  it('an authenticated request answers 503 with Retry-After, quickly', async () => {
    const started = Date.now();
    const response = await h.app.inject({
      url: '/api/services',
      headers: { authorization: 'Bearer hsk_JLjVtrX0g9kJXiDcxDYCVZywBSElJE1LxTGI' },
    });
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBeDefined();
    expect(json(response).code).toBe('dependency_unavailable');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('readiness says unavailable', async () => {
    const response = await h.app.inject({ url: '/readyz' });
    expect(response.statusCode).toBe(503);
    expect(json(response).checks).toContainEqual({ name: 'postgres', ok: false });
  });
});

describe('Redis unreachable', () => {
  let h: Harness;
  let key: string;
  beforeAll(async () => {
    const healthy = await createHarness();
    key = (await healthy.user('admin')).auth;
    await healthy.close();
    h = await createHarness({ REDIS_URL: 'redis://127.0.0.1:1' });
  });
  afterAll(async () => h.close());

  it('logs answer 503 with Retry-After', async () => {
    const created = await h.container.db.service.findFirst({ where: { deletedAt: null } });
    const response = await h.app.inject({
      url: `/api/services/${created?.id ?? 'x'}/logs`,
      headers: { authorization: key },
    });
    expect([503, 404]).toContain(response.statusCode);
    if (response.statusCode === 503) expect(response.headers['retry-after']).toBeDefined();
  });

  it('readiness says unavailable', async () => {
    const response = await h.app.inject({ url: '/readyz' });
    expect(response.statusCode).toBe(503);
    expect(json(response).checks).toContainEqual({ name: 'redis', ok: false });
  });
});
