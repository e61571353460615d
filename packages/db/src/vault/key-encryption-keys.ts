import { KEY_BYTES, open, seal } from './envelope.js';

/**
 * Where data keys are wrapped and unwrapped: the operator's key-encryption keys (KEK). The local
 * implementation holds them in memory (from SECRETS_KEK / SECRETS_KEK_FILE); an external KMS (Vault
 * Transit, AWS KMS, GCP KMS) plugs in by implementing this interface, since the plaintext data key
 * only ever leaves it as the result of `unwrap` (docs/secrets.md#an-external-kms).
 */
export interface KeyEncryptionKeys {
  /** The id new data keys are wrapped with. */
  readonly currentId: string;
  /** Whether a data key wrapped with `kekId` can be unwrapped (the key is configured). */
  has(kekId: string): boolean;
  /** Wraps with the current key; `context` (the customer id) is bound as AAD. */
  wrap(dataKey: Buffer, context: string): Promise<{ kekId: string; wrapped: Buffer }>;
  /** Throws SecretsKeyError naming the key when it is missing or wrong. */
  unwrap(kekId: string, wrapped: Buffer, context: string): Promise<Buffer>;
}

/** A key problem the process must not start (or go on) with: its message names the key and why. */
export class SecretsKeyError extends Error {
  override readonly name = 'SecretsKeyError';
}

export interface LocalKey {
  id: string;
  key: Buffer;
}

const wrapAad = (kekId: string, context: string) => `hostctl:data-key:${kekId}:${context}`;

/** The current key plus retired ones that still unwrap until a rotation has re-wrapped everything. */
export function createLocalKeyring(current: LocalKey, retired: readonly LocalKey[] = []): KeyEncryptionKeys {
  const keys = new Map<string, Buffer>();
  for (const entry of [current, ...retired]) {
    if (entry.key.length !== KEY_BYTES)
      throw new SecretsKeyError(
        `key-encryption key ${entry.id} must be ${KEY_BYTES} bytes, got ${entry.key.length}`,
      );
    if (keys.has(entry.id))
      throw new SecretsKeyError(`key-encryption key id ${entry.id} is configured twice`);
    keys.set(entry.id, entry.key);
  }
  return {
    currentId: current.id,
    has: (kekId) => keys.has(kekId),
    wrap: (dataKey, context) =>
      Promise.resolve({
        kekId: current.id,
        wrapped: seal(current.key, dataKey, wrapAad(current.id, context)),
      }),
    unwrap(kekId, wrapped, context) {
      const key = keys.get(kekId);
      if (!key)
        return Promise.reject(
          new SecretsKeyError(
            `data keys are wrapped with key-encryption key ${kekId}, which is not configured (SECRETS_KEK_ID / SECRETS_KEK_RETIRED)`,
          ),
        );
      try {
        return Promise.resolve(open(key, wrapped, wrapAad(kekId, context)));
      } catch {
        return Promise.reject(
          new SecretsKeyError(
            `key-encryption key ${kekId} does not open the data key of ${context}: the configured key is wrong`,
          ),
        );
      }
    },
  };
}
