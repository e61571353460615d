import { Type, type Static, type TSchema } from 'typebox';
import { DomainError, LIMITS, type FieldError } from '@hostctl/domain';

/** Environment variable names: what a shell and Compose interpolation accept. */
export const VARIABLE_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

/**
 * A map of name → value (docs/limits.md). `propertyNames` + `additionalProperties` rather than
 * TypeBox's Record: a Record with a key pattern becomes `patternProperties`, under which a key
 * that does not match (`"bad key"`) escaped every rule and could hold a nested object or a number.
 */
export function variablesSchema<V extends TSchema>(value: V, description?: string) {
  return Type.Unsafe<Record<string, Static<V>>>({
    type: 'object',
    propertyNames: { type: 'string', pattern: VARIABLE_NAME_PATTERN, maxLength: LIMITS.variableNameMax },
    additionalProperties: value,
    maxProperties: LIMITS.variablesMax,
    ...(description ? { description } : {}),
  });
}

/**
 * Byte bounds the schema cannot express (maxLength counts UTF-16 units, not bytes): each value at
 * most variableValueMaxBytes of UTF-8, all names and values together at most variablesTotalMaxBytes.
 * Checked on the map that will be stored, so merged updates cannot creep past the total.
 */
export function checkVariableBytes(variables: Record<string, string>, path = '/body/variables'): void {
  const errors: FieldError[] = [];
  let total = 0;
  for (const [name, value] of Object.entries(variables)) {
    const bytes = Buffer.byteLength(value, 'utf8');
    total += bytes + Buffer.byteLength(name, 'utf8');
    if (bytes > LIMITS.variableValueMaxBytes) {
      errors.push({
        path: `${path}/${name}`,
        message: `must be at most ${LIMITS.variableValueMaxBytes} bytes`,
      });
    }
  }
  if (total > LIMITS.variablesTotalMaxBytes) {
    errors.push({
      path,
      message: `names and values together must be at most ${LIMITS.variablesTotalMaxBytes} bytes`,
    });
  }
  if (errors.length > 0) {
    throw new DomainError('validation_failed', errors.map((e) => `${e.path} ${e.message}`).join('; '), {
      errors,
    });
  }
}
