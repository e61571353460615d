import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * The AEAD every secret at rest goes through: AES-256-GCM from node:crypto (OpenSSL), a fresh
 * 96-bit nonce per seal, the 128-bit tag checked before any plaintext is returned
 * (docs/adr/0011-aes-256-gcm-from-node-crypto.md). Nothing here is hand-rolled crypto: only the
 * framing (nonce | ciphertext | tag) is ours.
 */
const ALGORITHM = 'aes-256-gcm';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

export function seal(key: Buffer, plaintext: Buffer, aad: string): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]);
}

/** Throws when the key is wrong or a byte (or the AAD) changed: GCM's tag fails. */
export function open(key: Buffer, sealed: Buffer, aad: string): Buffer {
  if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new Error('sealed value too short');
  const nonce = sealed.subarray(0, NONCE_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  const decipher = createDecipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(tag);
  return Buffer.concat([
    decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)),
    decipher.final(),
  ]);
}

/** The JSON a protected column holds instead of its value: self-describing, so any reader spots it. */
export interface Envelope {
  /** Format marker and version. */
  $enc: typeof ENVELOPE_FORMAT;
  /** The data key (a row of data_keys) that sealed it. */
  dk: string;
  /** base64 of nonce | ciphertext | tag. */
  ct: string;
}

export const ENVELOPE_FORMAT = 'hostctl/aes-256-gcm/1';

export function isEnvelope(value: unknown): value is Envelope {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { $enc?: unknown }).$enc === ENVELOPE_FORMAT &&
    typeof (value as { dk?: unknown }).dk === 'string' &&
    typeof (value as { ct?: unknown }).ct === 'string'
  );
}

/** The AAD ties a ciphertext to its data key: a value sealed under one key never opens as another's. */
export const valueAad = (dataKeyId: string) => `hostctl:value:${dataKeyId}`;
