import { Type, type Static } from 'typebox';
import { LIMITS } from '@hostctl/domain';
import { Timestamp } from '../../http/schemas.js';
import { REDIRECT_MAX_LENGTH } from './redirect-target.js';

export const LoginQuery = Type.Object(
  { redirect: Type.Optional(Type.String({ minLength: 1, maxLength: REDIRECT_MAX_LENGTH })) },
  { additionalProperties: false },
);

/** Providers may add parameters of their own (session_state, …): extra ones are tolerated. */
export const CallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  iss: Type.Optional(Type.String({ maxLength: 2048 })),
  error: Type.Optional(Type.String({ maxLength: 256 })),
  error_description: Type.Optional(Type.String({ maxLength: 2048 })),
});

export const LogoutResult = Type.Object({
  message: Type.String(),
  /** Where the browser goes to end its session at the identity provider too; null when it has none. */
  logout_url: Type.Union([Type.String(), Type.Null()]),
});

export { UserProfile } from '../../http/user-profile.js';

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: LIMITS.apiKeyNameMax,
      pattern: '^[^\\u0000-\\u001f\\u007f]*\\S[^\\u0000-\\u001f\\u007f]*$',
    }),
    expires_at: Type.Optional(Type.Union([Timestamp, Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const ApiKeyCreated = Type.Object({
  id: Type.String(),
  name: Type.String(),
  /** The secret: returned here only, never again. */
  key: Type.String(),
  created_at: Timestamp,
  expires_at: Type.Union([Timestamp, Type.Null()]),
});

export const ApiKeyListItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Timestamp,
  expires_at: Type.Union([Timestamp, Type.Null()]),
  last_used_at: Type.Union([Timestamp, Type.Null()]),
});
export type ApiKeyListItem = Static<typeof ApiKeyListItem>;

export const ApiKeyList = Type.Object({ data: Type.Array(ApiKeyListItem), total: Type.Integer() });
