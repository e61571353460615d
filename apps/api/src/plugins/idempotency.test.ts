import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPOSE_BUSYBOX, createHarness, json, uniqueName, type Harness } from '../test-support/harness.js';

// Idempotency-Key on the two routes that create work, against the real app, Postgres and Redis.
let h: Harness;
let operator: { id: string; auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness();
  operator = await h.user('operator');
  customerId = (await h.customer()).id;
});
afterAll(async () => h.close());

const body = (name: string) => ({
  name,
  customer_id: customerId,
  deploy_method: 'compose',
  compose: COMPOSE_BUSYBOX,
});

function createService(key: string | undefined, payload: object, auth = operator.auth) {
  return h.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { authorization: auth, ...(key !== undefined ? { 'idempotency-key': key } : {}) },
    payload,
  });
}

function redeploy(serviceId: string, key: string) {
  return h.app.inject({
    method: 'POST',
    url: `/api/services/${serviceId}/redeploy`,
    headers: { authorization: operator.auth, 'idempotency-key': key },
  });
}

const countByName = (name: string) => h.container.db.service.count({ where: { name } });

describe('POST /api/services with Idempotency-Key', () => {
  it('replays the first response for the same key and body', async () => {
    const key = randomUUID();
    const name = uniqueName('idem');
    const first = await createService(key, body(name));
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    const second = await createService(key, body(name));
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers['content-type']).toMatch(/^application\/json/);
    expect(json(second)).toEqual(json(first));
    expect(await countByName(name)).toBe(1);
  });

  it('treats the same body with its keys in another order as the same request', async () => {
    const key = randomUUID();
    const name = uniqueName('idem');
    const first = await createService(key, body(name));
    const { compose, deploy_method, customer_id } = body(name);
    const second = await createService(key, { compose, deploy_method, name, customer_id });
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(json(second)).toEqual(json(first));
  });

  it('answers 422 idempotency_key_reused for the same key with a different body', async () => {
    const key = randomUUID();
    expect((await createService(key, body(uniqueName('idem')))).statusCode).toBe(201);
    const other = uniqueName('idem');
    const reused = await createService(key, body(other));
    expect(reused.statusCode).toBe(422);
    expect(reused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(json(reused)).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
    expect(await countByName(other)).toBe(0);
  });

  it('creates exactly one service for 10 concurrent duplicates', async () => {
    const key = randomUUID();
    const name = uniqueName('idem');
    const responses = await Promise.all(Array.from({ length: 10 }, () => createService(key, body(name))));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(10).fill(201));
    expect(new Set(responses.map((r) => json(r).id)).size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(9);
    expect(await countByName(name)).toBe(1);
    const service = await h.container.db.service.findFirstOrThrow({ where: { name } });
    expect(await h.container.db.deployment.count({ where: { serviceId: service.id } })).toBe(1);
  });

  it('scopes keys per user: another user with the same key is a new request', async () => {
    const key = randomUUID();
    expect((await createService(key, body(uniqueName('idem')))).statusCode).toBe(201);
    const colleague = await h.user('operator');
    const theirs = await createService(key, body(uniqueName('idem')), colleague.auth);
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  });

  it('does not store a failed response: the same key can be retried', async () => {
    const name = uniqueName('idem');
    const existing = json<{ id: string }>(await createService(undefined, body(name)));
    const key = randomUUID();
    const conflict = await createService(key, body(name));
    expect(conflict.statusCode).toBe(409);
    // The conflict goes away (the other service is renamed); a retry with the same key now runs.
    await h.container.db.service.update({ where: { id: existing.id }, data: { name: uniqueName('moved') } });
    const retried = await createService(key, body(name));
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['non-ASCII', 'caf\u00e9'],
    ['a control character', 'a\tb'],
  ])('answers 400 for a key that is %s', async (_label, key) => {
    const response = await createService(key, body(uniqueName('idem')));
    expect(response.statusCode).toBe(400);
    expect(json(response)).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: '/headers/idempotency-key' }],
    });
  });

  it('accepts a key of 255 printable characters', async () => {
    const key = `${randomUUID()} ~!`.padEnd(255, 'x');
    expect((await createService(key, body(uniqueName('idem')))).statusCode).toBe(201);
  });

  it('keeps completed keys for at least 24 hours', async () => {
    const key = randomUUID();
    expect((await createService(key, body(uniqueName('idem')))).statusCode).toBe(201);
    const keys = await h.container.redis.keys(`${h.config.QUEUE_PREFIX}:idempotency:${operator.id}:*`);
    const ttls = await Promise.all(keys.map((k) => h.container.redis.ttl(k)));
    expect(ttls.length).toBeGreaterThan(0);
    for (const ttl of ttls) expect(ttl).toBeGreaterThanOrEqual(24 * 3600 - 60);
  });
});

describe('POST /api/services/:id/redeploy with Idempotency-Key', () => {
  async function runningService(): Promise<{ id: string; deploy_job_id: string }> {
    const created = json<{ id: string; deploy_job_id: string }>(
      await createService(undefined, body(uniqueName('idem'))),
    );
    // Past the queue: a redeploy without a key would now queue a new deployment.
    await h.container.db.deployment.update({
      where: { id: created.deploy_job_id },
      data: { status: 'running' },
    });
    return created;
  }

  it('queues exactly one deployment for 10 concurrent duplicates and replays it later', async () => {
    const service = await runningService();
    const key = randomUUID();
    const responses = await Promise.all(Array.from({ length: 10 }, () => redeploy(service.id, key)));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    const jobIds = new Set(responses.map((r) => json(r).deploy_job_id));
    expect(jobIds.size).toBe(1);
    const [jobId] = [...jobIds] as string[];
    expect(jobId).not.toBe(service.deploy_job_id);
    expect(await h.container.db.deployment.count({ where: { serviceId: service.id } })).toBe(2);

    // Even after that deployment has started, the same key replays it instead of queueing another.
    await h.container.db.deployment.update({ where: { id: jobId }, data: { status: 'running' } });
    const replayed = await redeploy(service.id, key);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(json(replayed).deploy_job_id).toBe(jobId);
    expect(await h.container.db.deployment.count({ where: { serviceId: service.id } })).toBe(2);
  });

  it('answers 422 when the key is reused for another service', async () => {
    const key = randomUUID();
    const first = await runningService();
    const second = await runningService();
    expect((await redeploy(first.id, key)).statusCode).toBe(200);
    const reused = await redeploy(second.id, key);
    expect(reused.statusCode).toBe(422);
    expect(json(reused).code).toBe('idempotency_key_reused');
  });
});
