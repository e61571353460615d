import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API key format: `hsk_` + 30 random base62 characters (~178 bits) + 6 base62 characters of CRC32.
 * The prefix lets secret scanners find leaked keys, and the checksum lets us reject a mistyped or
 * forged key without touching the database. Only the SHA-256 digest is ever stored.
 */
export const API_KEY_PREFIX = 'hsk_';
const BODY_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function generateApiKey(): { key: string; digest: string } {
  let body = '';
  while (body.length < BODY_LENGTH) {
    for (const byte of randomBytes(BODY_LENGTH * 2)) {
      // 248 = 4 * 62: rejecting higher bytes keeps every character equally likely.
      if (byte < 248 && body.length < BODY_LENGTH) body += ALPHABET[byte % 62];
    }
  }
  const key = `${API_KEY_PREFIX}${body}${checksum(body)}`;
  return { key, digest: digestApiKey(key) };
}

export function digestApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function hasApiKeyShape(key: string): boolean {
  if (!key.startsWith(API_KEY_PREFIX)) return false;
  const rest = key.slice(API_KEY_PREFIX.length);
  if (rest.length !== BODY_LENGTH + CHECKSUM_LENGTH || !/^[0-9A-Za-z]+$/.test(rest)) return false;
  return checksum(rest.slice(0, BODY_LENGTH)) === rest.slice(BODY_LENGTH);
}

function checksum(body: string): string {
  let value = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}
