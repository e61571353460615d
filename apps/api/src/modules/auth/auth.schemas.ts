import { Type, type Static } from 'typebox';
import { KEY_ACTIONS } from '@hostctl/auth-policy';
import { LIMITS } from '@hostctl/domain';
import { Id, Timestamp } from '../../http/schemas.js';
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

/** The deploy-token action vocabulary (auth-policy KEY_ACTIONS; the test of key-limits compares them). */
const KeyActionSchema = Type.Union([
  Type.Literal('read'),
  Type.Literal('deploy'),
  Type.Literal('operate'),
  Type.Literal('manage'),
  Type.Literal('exec'),
]);
const _sameVocabulary: readonly Static<typeof KeyActionSchema>[] = KEY_ACTIONS;

export const CreateApiKeyBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: LIMITS.apiKeyNameMax,
      pattern: '^[^\\u0000-\\u001f\\u007f]*\\S[^\\u0000-\\u001f\\u007f]*$',
    }),
    expires_at: Type.Optional(Type.Union([Timestamp, Type.Null()])),
    /** Deploy-token limits (docs/auth.md#deploy-tokens): one service or one customer, and actions. */
    service_id: Type.Optional(Id),
    customer_id: Type.Optional(Id),
    actions: Type.Optional(
      Type.Array(KeyActionSchema, {
        minItems: 1,
        maxItems: KEY_ACTIONS.length,
        uniqueItems: true,
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

/** A key's limits; null fields are not limited (actions null: every action the owner's role allows). */
const ApiKeyLimits = Type.Object({
  service_id: Type.Union([Type.String(), Type.Null()]),
  customer_id: Type.Union([Type.String(), Type.Null()]),
  actions: Type.Union([Type.Array(Type.String()), Type.Null()]),
});

export const ApiKeyCreated = Type.Object({
  id: Type.String(),
  name: Type.String(),
  /** The secret: returned here only, never again. */
  key: Type.String(),
  created_at: Timestamp,
  expires_at: Type.Union([Timestamp, Type.Null()]),
  limits: ApiKeyLimits,
});

export const ApiKeyListItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Timestamp,
  expires_at: Type.Union([Timestamp, Type.Null()]),
  last_used_at: Type.Union([Timestamp, Type.Null()]),
  limits: ApiKeyLimits,
});
export type ApiKeyListItem = Static<typeof ApiKeyListItem>;

export const ApiKeyList = Type.Object({ data: Type.Array(ApiKeyListItem), total: Type.Integer() });
