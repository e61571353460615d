import { randomBytes } from 'node:crypto';
import type { Db } from '../client.js';
import { isUniqueViolation } from '../errors.js';
import { ENVELOPE_FORMAT, isEnvelope, KEY_BYTES, open, seal, valueAad, type Envelope } from './envelope.js';
import { SecretsKeyError, type KeyEncryptionKeys } from './key-encryption-keys.js';

/**
 * Envelope encryption of the values kept at rest (docs/secrets.md#key-hierarchy): each customer
 * has one data key (data_keys), stored only wrapped by the operator's key-encryption key; values
 * are sealed with the data key. Unwrapped data keys are cached in memory per process, so a value
 * costs one AES-GCM operation once its customer's key was seen.
 */
export interface Vault {
  seal(customerId: string, value: unknown): Promise<Envelope>;
  /** The value an envelope holds; throws SecretsKeyError when its key cannot be opened. */
  open(envelope: Envelope): Promise<unknown>;
  /** Replaces, in place, every envelope found in a query result (objects and arrays) by its value. */
  openAll<T>(result: T): Promise<T>;
  /**
   * Refuses to start with the reason: every key-encryption key the data keys name must be
   * configured and must open one of them (a wrong key with the right id fails here, not later).
   */
  verify(): Promise<void>;
  readonly keys: KeyEncryptionKeys;
}

/**
 * The owner of the platform's own data key: secrets no customer owns (the TLS certificate keys,
 * docs/tls.md) are sealed with it. Stored in `data_keys.customer_id`, where it can never collide
 * with a customer (customer ids are UUIDs); wrapped, verified and re-wrapped like any data key.
 */
export const PLATFORM_KEY_OWNER = 'platform';

interface DataKey {
  id: string;
  key: Buffer;
}

/** `base` must be the unextended client: data keys are plain rows, and lookups run outside any caller's transaction. */
export function createVault(base: Db, keys: KeyEncryptionKeys): Vault {
  const byId = new Map<string, Promise<Buffer>>();
  const byCustomer = new Map<string, Promise<DataKey>>();

  async function unwrapRow(row: { id: string; customerId: string; kekId: string; wrapped: Uint8Array }) {
    return keys.unwrap(row.kekId, Buffer.from(row.wrapped), row.customerId);
  }

  async function loadById(id: string): Promise<Buffer> {
    const row = await base.dataKey.findUnique({ where: { id } });
    if (!row) throw new SecretsKeyError(`data key ${id} does not exist: the value cannot be decrypted`);
    return unwrapRow(row);
  }

  async function loadForCustomer(customerId: string): Promise<DataKey> {
    const existing = await base.dataKey.findUnique({ where: { customerId } });
    if (existing) return { id: existing.id, key: await unwrapRow(existing) };
    const key = randomBytes(KEY_BYTES);
    const { kekId, wrapped } = await keys.wrap(key, customerId);
    try {
      const row = await base.dataKey.create({
        data: { customerId, kekId, wrapped: new Uint8Array(wrapped) },
      });
      return { id: row.id, key };
    } catch (error) {
      // Another process made the customer's key first: use that one.
      if (!isUniqueViolation(error)) throw error;
      const row = await base.dataKey.findUniqueOrThrow({ where: { customerId } });
      return { id: row.id, key: await unwrapRow(row) };
    }
  }

  /** A failed load is not cached: the next call tries again (a key may have been fixed). */
  function cached<K, V>(map: Map<K, Promise<V>>, key: K, load: () => Promise<V>): Promise<V> {
    let entry = map.get(key);
    if (!entry) {
      entry = load();
      map.set(key, entry);
      entry.catch(() => map.delete(key));
    }
    return entry;
  }

  const vault: Vault = {
    keys,
    async seal(customerId, value) {
      const dataKey = await cached(byCustomer, customerId, () => loadForCustomer(customerId));
      byId.set(dataKey.id, Promise.resolve(dataKey.key));
      const sealed = seal(dataKey.key, Buffer.from(JSON.stringify(value), 'utf8'), valueAad(dataKey.id));
      return { $enc: ENVELOPE_FORMAT, dk: dataKey.id, ct: sealed.toString('base64') };
    },
    async open(envelope) {
      const key = await cached(byId, envelope.dk, () => loadById(envelope.dk));
      let plaintext: Buffer;
      try {
        plaintext = open(key, Buffer.from(envelope.ct, 'base64'), valueAad(envelope.dk));
      } catch {
        throw new SecretsKeyError(`a value sealed with data key ${envelope.dk} failed its integrity check`);
      }
      return JSON.parse(plaintext.toString('utf8')) as unknown;
    },
    async openAll(result) {
      if (isEnvelope(result)) return (await vault.open(result)) as typeof result;
      const pending: Promise<void>[] = [];
      visit(result, (holder, key, envelope) => {
        pending.push(
          vault.open(envelope).then((value) => {
            (holder as Record<string | number, unknown>)[key] = value;
          }),
        );
      });
      await Promise.all(pending);
      return result;
    },
    async verify() {
      const rows = await base.$queryRaw<{ kek_id: string; id: string }[]>`
        SELECT DISTINCT ON (kek_id) kek_id, id FROM data_keys ORDER BY kek_id, id`;
      for (const row of rows) {
        if (!keys.has(row.kek_id))
          throw new SecretsKeyError(
            `data keys are wrapped with key-encryption key ${row.kek_id}, which is not configured; set it as SECRETS_KEK (with SECRETS_KEK_ID=${row.kek_id}) or in SECRETS_KEK_RETIRED`,
          );
        await loadById(row.id);
      }
    },
  };
  return vault;
}

type Found = (holder: object, key: string | number, envelope: Envelope) => void;

/** Plain objects and arrays only: Dates, Buffers and Decimals in a result are left alone. */
function visit(node: unknown, found: Found): void {
  if (Array.isArray(node)) {
    node.forEach((item, index) => (isEnvelope(item) ? found(node, index, item) : visit(item, found)));
    return;
  }
  if (typeof node !== 'object' || node === null || Object.getPrototypeOf(node) !== Object.prototype) return;
  for (const [key, value] of Object.entries(node))
    if (isEnvelope(value)) found(node, key, value);
    else visit(value, found);
}
