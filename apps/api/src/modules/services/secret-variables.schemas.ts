import { Type, type Static } from 'typebox';
import { LIMITS } from '@hostctl/domain';
import { Timestamp } from '../../http/schemas.js';
import { VARIABLE_NAME_PATTERN, variablesSchema } from './variables.js';

/** What the detail shows of a secret variable: that it is set and when, never its value. */
export const SecretVariablesView = Type.Record(
  Type.String(),
  Type.Object({ set: Type.Literal(true), updated_at: Timestamp }),
  {
    description:
      'Secret variables by name: write-only, the value is never shown (POST …/secret-variables/reveal reads one)',
  },
);

const value = Type.String({ maxLength: LIMITS.variableValueMaxBytes });

export const SecretVariablesOnCreate = Type.Optional(
  variablesSchema(
    value,
    'Write-only variables: deployed like variables, never shown; a name is plain or secret',
  ),
);

export const SecretVariablesOnUpdate = Type.Optional(
  variablesSchema(
    Type.Union([value, Type.Null()]),
    'Merged into the current secret variables; null removes one. A plain variable becomes secret when the same request removes it under variables',
  ),
);

export const RevealSecretBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: LIMITS.variableNameMax,
      pattern: VARIABLE_NAME_PATTERN,
      description: 'The secret variable to read',
    }),
  },
  { additionalProperties: false },
);
export type RevealSecretBody = Static<typeof RevealSecretBody>;

export const RevealSecretResult = Type.Object({
  name: Type.String(),
  value: Type.String(),
  updated_at: Timestamp,
});
