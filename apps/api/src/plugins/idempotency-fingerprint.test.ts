import { createHash, createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPOSE_BUSYBOX, createHarness, json, uniqueName, type Harness } from '../test-support/harness.js';
import { fingerprintKey } from './idempotency.js';

/**
 * The request fingerprint an idempotency record keeps (docs/idempotency.md#fingerprints) is an
 * HMAC under a key derived from SESSION_SECRET: a Redis dump alone cannot confirm a guess of a
 * secret sent in the body. Records written before it (a bare SHA-256) still replay until they expire.
 */
let h: Harness;
let operator: { id: string; auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness();
  operator = await h.user('operator');
  customerId = (await h.customer()).id;
});
afterAll(async () => h?.close());

const ROUTE = 'POST /api/services';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const recordKey = (key: string) =>
  `${h.config.QUEUE_PREFIX}:idempotency:${operator.id}:${sha256(`${ROUTE}\n${key}`)}`;

function body(name: string, secret: string) {
  return {
    name,
    customer_id: customerId,
    deploy_method: 'compose',
    compose: COMPOSE_BUSYBOX,
    secret_variables: { API_TOKEN: secret },
  };
}

/** The request as the plugin reads it: method, path and the body with its keys sorted. */
function requestText(payload: ReturnType<typeof body>): string {
  const sorted = (value: unknown): unknown =>
    value !== null && typeof value === 'object'
      ? Object.fromEntries(
          Object.entries(value)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([k, v]) => [k, sorted(v)]),
        )
      : value;
  return `POST /api/services\n${JSON.stringify(sorted(payload))}`;
}

const create = (key: string, payload: object) =>
  h.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { authorization: operator.auth, 'idempotency-key': key },
    payload,
  });

const stored = async (key: string) =>
  JSON.parse((await h.container.redis.get(recordKey(key))) ?? 'null') as { fingerprint: string } | null;

describe('the idempotency fingerprint of a create', () => {
  it('is keyed: not the SHA-256 of the request (a guess of the secret confirms nothing), the HMAC under the derived key', async () => {
    const key = randomUUID();
    const secret = '4821'; // four digits: what a dump with an unkeyed hash would give away
    const payload = body(uniqueName('fp'), secret);
    expect((await create(key, payload)).statusCode).toBe(201);
    const record = await stored(key);
    const text = requestText(payload);
    expect(record?.fingerprint).not.toContain(sha256(text));
    expect(record?.fingerprint).toBe(
      `hmac-sha256:${createHmac('sha256', fingerprintKey(h.config.SESSION_SECRET)).update(text).digest('hex')}`,
    );
    // The derived key is neither SESSION_SECRET itself nor a key of another secret.
    expect(fingerprintKey(h.config.SESSION_SECRET).toString('hex')).not.toContain(
      Buffer.from(h.config.SESSION_SECRET).toString('hex'),
    );
    expect(fingerprintKey('another secret').equals(fingerprintKey(h.config.SESSION_SECRET))).toBe(false);
  });

  it('keeps the replay and mismatch answers: same body replays, another secret value is 422', async () => {
    const key = randomUUID();
    const payload = body(uniqueName('fp'), 'first-secret-value');
    const first = await create(key, payload);
    const again = await create(key, payload);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(json(again)).toEqual(json(first));
    const other = await create(key, { ...payload, secret_variables: { API_TOKEN: 'second-secret-value' } });
    expect(other.statusCode).toBe(422);
    expect(json(other)).toMatchObject({ code: 'idempotency_key_reused' });
    expect(await h.container.db.service.count({ where: { name: payload.name } })).toBe(1);
  });
});

describe('records written before the fingerprint was keyed', () => {
  async function plant(key: string, fingerprint: string, answer: object) {
    const record = {
      state: 'done',
      fingerprint,
      status: 201,
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify(answer),
    };
    await h.container.redis.set(recordKey(key), JSON.stringify(record), 'EX', 3600);
  }

  it('still replay for the same request and refuse another, until they expire', async () => {
    const key = randomUUID();
    const payload = body(uniqueName('fp'), 'legacy-secret');
    const answer = { id: randomUUID(), name: payload.name, planted: true };
    await plant(key, sha256(requestText(payload)), answer);
    const replayed = await create(key, payload);
    expect(replayed.statusCode).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(json(replayed)).toEqual(answer);
    const other = await create(key, body(payload.name, 'another-secret'));
    expect(other.statusCode).toBe(422);
    expect(await h.container.db.service.count({ where: { name: payload.name } })).toBe(0);
  });

  it('a keyed record made under another SESSION_SECRET is a 422, never a second run', async () => {
    const key = randomUUID();
    const payload = body(uniqueName('fp'), 'rotated-secret');
    const old = createHmac('sha256', fingerprintKey('the secret before rotation'))
      .update(requestText(payload))
      .digest('hex');
    await plant(key, `hmac-sha256:${old}`, { id: randomUUID() });
    expect((await create(key, payload)).statusCode).toBe(422);
    expect(await h.container.db.service.count({ where: { name: payload.name } })).toBe(0);
  });
});
