import { createHash, createHmac, hkdfSync, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { DomainError } from '@hostctl/domain';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route honours an `Idempotency-Key` header (plugins/idempotency.ts). */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    /** Set while this request holds the key's in-flight lock and must settle it in onSend. */
    idempotency: IdempotencyClaim | null;
  }
}

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** 1..255 printable ASCII characters (space to tilde). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export interface IdempotencyOptions {
  redis: Redis;
  prefix: string;
  /**
   * The key of the stored request fingerprints (fingerprintKey()): a request body can carry secrets
   * (`secret_variables` on a create), and an unkeyed hash of a body otherwise known would let
   * whoever holds a Redis dump test guesses of a low-entropy secret offline.
   */
  fingerprintKey: Buffer;
  /** How long a completed response is replayable; at least 24 h by contract. */
  retentionSeconds?: number;
  /** Upper bound of one in-flight request: a crashed replica's lock frees the key after this. */
  lockSeconds?: number;
  /** How long a concurrent duplicate waits for the first request before answering 409. */
  waitMs?: number;
  pollMs?: number;
}

interface IdempotencyClaim {
  key: string;
  token: string;
  fingerprint: string;
}

type StoredRecord =
  | { state: 'in_progress'; token: string; fingerprint: string }
  | { state: 'done'; fingerprint: string; status: number; contentType: string | null; body: string | null };

// Deletes the lock only while it is still ours: after a lock expiry another request may own the key.
const RELEASE_SCRIPT = `
local value = redis.call('GET', KEYS[1])
if value and cjson.decode(value).token == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * Idempotency-Key for routes with `config.idempotent`: the first request with a key runs, and its
 * 2xx response is kept (Redis, ≥ 24 h) and replayed for the same key and the same request. The key
 * is scoped to the caller's user id and the route, so two users never see each other's responses.
 * A different request under a used key is a 422; a duplicate arriving while the first is still
 * running waits for it briefly, then gets 409 with Retry-After. Failures are not stored, so a
 * failed request can be retried with the same key.
 */
export function registerIdempotency(app: FastifyInstance, options: IdempotencyOptions): void {
  const retentionSeconds = options.retentionSeconds ?? 24 * 3600;
  const lockSeconds = options.lockSeconds ?? 120;
  const waitMs = options.waitMs ?? 10_000;
  const pollMs = options.pollMs ?? 50;
  const { redis } = options;

  app.decorateRequest('idempotency', null);

  // preHandler: after authentication (the scope needs the user) and after body validation (an
  // invalid body is a 400 that must not take the key).
  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.config.idempotent !== true) return;
    const raw = request.headers[IDEMPOTENCY_HEADER];
    if (raw === undefined || request.principal === null) return;
    const idempotencyKey = Array.isArray(raw) ? raw.join(', ') : raw;
    if (!IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) {
      const path = `/headers/${IDEMPOTENCY_HEADER}`;
      const message = 'must be 1 to 255 printable ASCII characters';
      throw new DomainError('validation_failed', `${path} ${message}`, { errors: [{ path, message }] });
    }
    const route = `${request.method} ${request.routeOptions.url ?? ''}`;
    // A deploy token has its own key space: it must never replay what its owner's wider
    // credentials did (a create for another customer, say) under the same Idempotency-Key.
    const { userId, limits, apiKeyId } = request.principal;
    const owner = limits ? `${userId}:key:${apiKeyId ?? ''}` : userId;
    const key = `${options.prefix}:idempotency:${owner}:${sha256(`${route}\n${idempotencyKey}`)}`;
    const fingerprint = fingerprintOf(request, options.fingerprintKey);

    const deadline = Date.now() + waitMs;
    for (;;) {
      const token = randomUUID();
      const claim: StoredRecord = { state: 'in_progress', token, fingerprint };
      if ((await redis.set(key, JSON.stringify(claim), 'EX', lockSeconds, 'NX')) === 'OK') {
        request.idempotency = { key, token, fingerprint };
        return;
      }
      const stored = parse(await redis.get(key));
      if (stored === null) continue; // settled and released between SET and GET: try to claim again
      if (!sameRequest(stored.fingerprint, fingerprint, request)) {
        throw new DomainError(
          'idempotency_key_reused',
          'this Idempotency-Key was already used for a different request; use a new key for a new request',
        );
      }
      if (stored.state === 'done') return replay(reply, stored);
      if (Date.now() >= deadline) {
        throw new DomainError(
          'idempotency_in_progress',
          'a request with this Idempotency-Key is still running; retry shortly',
          {
            headers: { 'retry-after': '1' },
          },
        );
      }
      await sleep(pollMs);
    }
  });

  // onSend sees the serialized payload and the final status, including error replies.
  app.addHook('onSend', async (request, reply, payload) => {
    const claim = request.idempotency;
    if (claim === null) return payload;
    request.idempotency = null;
    try {
      if (reply.statusCode >= 200 && reply.statusCode < 300) {
        const record: StoredRecord = {
          state: 'done',
          fingerprint: claim.fingerprint,
          status: reply.statusCode,
          contentType: headerText(reply.getHeader('content-type')),
          body:
            typeof payload === 'string'
              ? payload
              : Buffer.isBuffer(payload)
                ? payload.toString('utf8')
                : null,
        };
        await redis.set(claim.key, JSON.stringify(record), 'EX', retentionSeconds);
      } else {
        await release(redis, claim);
      }
    } catch (error) {
      // The work is done: failing its reply now would invite a retry that repeats it.
      request.log.warn({ err: error }, 'idempotency record not saved');
    }
    return payload;
  });

  // A request that ends without a reply (client gone before onSend) must not hold the key until the lock expires.
  app.addHook('onResponse', async (request) => {
    const claim = request.idempotency;
    if (claim === null) return;
    request.idempotency = null;
    await release(redis, claim).catch((error: unknown) =>
      request.log.warn({ err: error }, 'idempotency lock not released'),
    );
  });
}

async function release(redis: Redis, claim: IdempotencyClaim): Promise<void> {
  await redis.eval(RELEASE_SCRIPT, 1, claim.key, claim.token);
}

function replay(reply: FastifyReply, stored: Extract<StoredRecord, { state: 'done' }>): FastifyReply {
  reply.status(stored.status).header(REPLAYED_HEADER, 'true');
  if (stored.contentType !== null) reply.header('content-type', stored.contentType);
  // A string with a JSON content type is sent as it was serialized the first time.
  return reply.send(stored.body ?? undefined);
}

const KEYED = 'hmac-sha256:';

/**
 * The fingerprint key, derived (HKDF-SHA256) from SESSION_SECRET under a label of its own, so it
 * equals nothing the sessions or webhooks use and needs no setting of its own (docs/idempotency.md).
 */
export function fingerprintKey(sessionSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', sessionSecret, '', 'hostctl idempotency fingerprint v1', 32));
}

/** What makes two requests "the same": route, concrete path (ids) and a canonical form of the body. */
function requestText(request: FastifyRequest): string {
  const path = request.url.split('?')[0] ?? request.url;
  return `${request.method} ${path}\n${canonicalJson(request.body ?? null)}`;
}

function fingerprintOf(request: FastifyRequest, key: Buffer): string {
  return `${KEYED}${createHmac('sha256', key).update(requestText(request)).digest('hex')}`;
}

/**
 * A record written before fingerprints were keyed holds the bare SHA-256 of the request: it is
 * compared as it was written, so a retry across the upgrade still replays (or is still refused)
 * until the record expires, 24 h at most; new records are keyed only. A keyed record made under
 * another SESSION_SECRET never matches: its retry is a 422, never a second run.
 */
function sameRequest(stored: string, fingerprint: string, request: FastifyRequest): boolean {
  if (stored.startsWith(KEYED)) return stored === fingerprint;
  return stored === sha256(requestText(request));
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function parse(text: string | null): StoredRecord | null {
  return text === null ? null : (JSON.parse(text) as StoredRecord);
}

function headerText(value: string | number | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
