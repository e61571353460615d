import { KEY_BYTES } from './envelope.js';
import {
  createLocalKeyring,
  SecretsKeyError,
  type KeyEncryptionKeys,
  type LocalKey,
} from './key-encryption-keys.js';

/** The operator's settings as configured (docs/configuration.md: SECRETS_KEK*). */
export interface KeyringSettings {
  /** base64 of 32 random bytes (`openssl rand -base64 32`). */
  SECRETS_KEK: string;
  SECRETS_KEK_ID: string;
  /** Comma-separated `id:base64` keys still readable while a rotation re-wraps (then removed). */
  SECRETS_KEK_RETIRED?: string;
}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

function parseKey(id: string, encoded: string, where: string): LocalKey {
  if (!KEY_ID.test(id))
    throw new SecretsKeyError(`${where}: key id "${id}" must be 1-64 of A-Z a-z 0-9 . _ -`);
  const key = Buffer.from(encoded.trim(), 'base64');
  if (key.length !== KEY_BYTES)
    throw new SecretsKeyError(
      `${where}: key ${id} must be base64 of ${KEY_BYTES} bytes (openssl rand -base64 32), got ${key.length} bytes`,
    );
  return { id, key };
}

/** Throws SecretsKeyError naming the setting at fault; the process must not start without keys. */
export function keyringFromSettings(settings: KeyringSettings): KeyEncryptionKeys {
  const current = parseKey(settings.SECRETS_KEK_ID, settings.SECRETS_KEK, 'SECRETS_KEK');
  const retired = (settings.SECRETS_KEK_RETIRED ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .map((entry) => {
      const colon = entry.indexOf(':');
      if (colon < 1) throw new SecretsKeyError('SECRETS_KEK_RETIRED: each entry is id:base64-key');
      return parseKey(entry.slice(0, colon), entry.slice(colon + 1), 'SECRETS_KEK_RETIRED');
    });
  return createLocalKeyring(current, retired);
}

/**
 * The same keys from an environment as loaded (tests, the seed and bench tools, which read their
 * settings from the dev stack's env file); the apps go through their validated config instead.
 */
export function keyringFromEnvironment(env: Record<string, string | undefined>): KeyEncryptionKeys {
  if (!env.SECRETS_KEK)
    throw new SecretsKeyError('SECRETS_KEK is not set (scripts/setup-services.sh writes one into .data/env)');
  return keyringFromSettings({
    SECRETS_KEK: env.SECRETS_KEK,
    SECRETS_KEK_ID: env.SECRETS_KEK_ID ?? 'k1',
    SECRETS_KEK_RETIRED: env.SECRETS_KEK_RETIRED ?? '',
  });
}
