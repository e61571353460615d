import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '@hostctl/domain';

// ajv-formats ships CommonJS with a default export object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const base: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false };

/**
 * Bodies are JSON and must already have the right types: `{"name": 123}` is a 400, not "123".
 * Query strings and path params are text, so they are coerced (`per_page=20` → 20).
 */
const strict = addFormats(new Ajv({ ...base, coerceTypes: false }));
const coercing = addFormats(new Ajv({ ...base, coerceTypes: 'array' }));

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strict : coercing;
  return ajv.compile(schema);
};

/** Turns ajv errors into `{ path, message }` pairs naming the offending input. */
export function toFieldErrors(part: string, errors: ErrorObject[]): FieldError[] {
  return errors.map((error) => {
    let path = `/${part}${error.instancePath}`;
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'additionalProperties') {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      path = `${path}/${extra}`;
      message = 'is not a known field';
    } else if (error.keyword === 'required') {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      path = `${path}/${missing}`;
      message = 'is required';
    } else if (error.keyword === 'enum') {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
      message = `must be one of ${allowed.map(String).join(', ')}`;
    }
    return { path: path.replace(/\/+$/, '') || '/', message };
  });
}
