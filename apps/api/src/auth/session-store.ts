import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** What the server keeps about a browser session. The cookie holds only the random secret id. */
export interface SessionRecord {
  userId: string;
  createdAt: string;
  /** Sent as id_token_hint when the user signs out at the provider. */
  idToken: string | null;
}

export interface LoadedSession {
  /** sha256 of the secret: names the session in Redis, logs and Principal.sessionId. */
  handle: string;
  record: SessionRecord;
}

export type SessionStore = ReturnType<typeof createSessionStore>;

/** sha256 of the secret id, so neither Redis keys nor principals ever carry a usable credential. */
export function sessionHandle(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/**
 * Server-side sessions in Redis, shared by every API replica. Each session expires after
 * `ttlSeconds` without use; a per-user set indexes them so several can coexist and be listed.
 */
export function createSessionStore(deps: { redis: Redis; prefix: string; ttlSeconds: number }) {
  const { redis, ttlSeconds } = deps;
  const sessionKey = (handle: string) => `${deps.prefix}:auth:session:${handle}`;
  const userKey = (userId: string) => `${deps.prefix}:auth:user-sessions:${userId}`;
  const indexExtensions = createIndexExtensionThrottle(ttlSeconds);

  async function liveHandles(userId: string): Promise<string[]> {
    const handles = await redis.smembers(userKey(userId));
    if (handles.length === 0) return [];
    const exists = await Promise.all(handles.map((handle) => redis.exists(sessionKey(handle))));
    const dead = handles.filter((_, i) => exists[i] === 0);
    // Sessions expire on their own; their index entries are pruned lazily here.
    if (dead.length > 0) await redis.srem(userKey(userId), ...dead);
    return handles.filter((_, i) => exists[i] === 1);
  }

  return {
    /** A new session under a fresh 256-bit random id; the secret goes into the cookie only. */
    async create(record: SessionRecord): Promise<{ secret: string; handle: string }> {
      const secret = randomBytes(32).toString('base64url');
      const handle = sessionHandle(secret);
      await redis
        .multi()
        .set(sessionKey(handle), JSON.stringify(record), 'EX', ttlSeconds)
        .sadd(userKey(record.userId), handle)
        .expire(userKey(record.userId), indexExtensions.ttlSeconds)
        .exec();
      await liveHandles(record.userId);
      return { secret, handle };
    },

    /** Loads a session and restarts its TTL: each use keeps it alive for another full TTL. */
    async touch(secret: string): Promise<LoadedSession | null> {
      const handle = sessionHandle(secret);
      const raw = await redis.getex(sessionKey(handle), 'EX', ttlSeconds);
      const record = raw === null ? null : parseRecord(raw);
      if (!record) return null;
      // The index outlives its longest-lived member: it is extended when one of them is used (at
      // most every few minutes per user and process; see createIndexExtensionThrottle). Not
      // awaited: it is bookkeeping for listing a user's sessions, not part of the request.
      if (indexExtensions.due(record.userId)) {
        redis.expire(userKey(record.userId), indexExtensions.ttlSeconds).catch(() => undefined);
      }
      return { handle, record };
    },

    /** Reads a session without extending it (logout reads the ID token it is about to discard). */
    async find(handle: string): Promise<SessionRecord | null> {
      const raw = await redis.get(sessionKey(handle));
      return raw === null ? null : parseRecord(raw);
    },

    async remove(handle: string, userId: string): Promise<void> {
      await redis.multi().del(sessionKey(handle)).srem(userKey(userId), handle).exec();
    },

    /** Ends a session known only by its cookie secret (a previous session of a browser signing in again). */
    async removeBySecret(secret: string): Promise<void> {
      const handle = sessionHandle(secret);
      const raw = await redis.getdel(sessionKey(handle));
      const record = raw === null ? null : parseRecord(raw);
      if (record) await redis.srem(userKey(record.userId), handle);
    },

    /** Handles of the user's live sessions. */
    listForUser(userId: string): Promise<string[]> {
      return liveHandles(userId);
    },

    /** Signs a user out everywhere (for operators: a compromised account, a removed user). */
    async removeAllForUser(userId: string): Promise<number> {
      const handles = await redis.smembers(userKey(userId));
      await redis
        .multi()
        .del(...handles.map(sessionKey), userKey(userId))
        .exec();
      return handles.length;
    },
  };
}

function parseRecord(raw: string): SessionRecord | null {
  try {
    const value = JSON.parse(raw) as Partial<SessionRecord>;
    if (typeof value.userId !== 'string' || typeof value.createdAt !== 'string') return null;
    return {
      userId: value.userId,
      createdAt: value.createdAt,
      idToken: typeof value.idToken === 'string' ? value.idToken : null,
    };
  } catch {
    return null;
  }
}

/**
 * Extending a user's session index on every request would add a Redis command to each one. Once
 * per 1/20 of the session TTL (at most 5 min) per user and process is enough, provided each
 * extension lasts that interval longer than a session: every write of the index TTL (here and at
 * creation) sets it to now + TTL + interval, and a process that skips a write wrote one less than
 * an interval ago, so the index always outlives the session just used: removing all of a user's
 * sessions (role change, account removal) never misses one.
 */
function createIndexExtensionThrottle(sessionTtlSeconds: number) {
  const intervalSeconds = Math.ceil(Math.min(300, sessionTtlSeconds / 20));
  const intervalMs = intervalSeconds * 1000;
  const lastExtended = new Map<string, number>();
  return {
    ttlSeconds: sessionTtlSeconds + intervalSeconds,
    due(userId: string, now = Date.now()): boolean {
      const last = lastExtended.get(userId);
      if (last !== undefined && now - last < intervalMs) return false;
      // Bounded memory: forgetting everyone only costs one extra EXPIRE per active user.
      if (lastExtended.size >= 10_000) lastExtended.clear();
      lastExtended.set(userId, now);
      return true;
    },
  };
}
