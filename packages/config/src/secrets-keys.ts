import { Type } from 'typebox';
import { describe } from './describe.js';

/** The key-encryption keys that seal variables at rest (docs/secrets.md): api, worker and `hostctl secrets`. */
export const secretsKeys = {
  SECRETS_KEK: describe(
    Type.String({ minLength: 1 }),
    "Key-encryption key: base64 of 32 random bytes (openssl rand -base64 32), or SECRETS_KEK_FILE. Wraps every customer's data key; without it (or with a wrong one) the process refuses to start. Back it up: the database is unreadable without it (docs/secrets.md).",
  ),
  SECRETS_KEK_ID: describe(
    Type.String({ default: 'k1', pattern: '^[A-Za-z0-9._-]{1,64}$' }),
    'Id of SECRETS_KEK, recorded with every data key it wraps; give each new key a new id (rotation: docs/secrets.md#rotation).',
  ),
  SECRETS_KEK_RETIRED: describe(
    Type.String({ default: '' }),
    'Comma-separated id:base64 keys that still unwrap data keys until `hostctl secrets rotate` has re-wrapped them under SECRETS_KEK; remove them afterwards. Or SECRETS_KEK_RETIRED_FILE.',
  ),
};
