import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '@hostctl/domain';
import { findNul, isSaneTimestamp, withIntegerBounds } from './input-bounds.js';

// ajv-formats ships CommonJS with a default export object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const base: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false };

function createAjv(options: Options): Ajv {
  const ajv = addFormats(new Ajv({ ...base, ...options }));
  // RFC 3339 and within years 0001–9999: what PostgreSQL, JavaScript and Redis stream ids all hold.
  // ajv-formats alone accepts year 0000 and never checks that the date exists.
  ajv.addFormat('date-time', { type: 'string', validate: isSaneTimestamp });
  return ajv;
}

/**
 * Bodies are JSON and must already have the right types: `{"name": 123}` is a 400, not "123".
 * Query strings and path params are text, so they are coerced (`per_page=20` → 20).
 */
const strict = createAjv({ coerceTypes: false });
const coercing = createAjv({ coerceTypes: 'array' });

/**
 * Every request part of every route goes through here, which is what makes these rules hold for a
 * route added tomorrow: no string (value or key) may contain NUL, which PostgreSQL text refuses
 * (a 500 from deep inside a query otherwise), and integers are bounded (below).
 */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strict : coercing;
  const validate = ajv.compile(withIntegerBounds(schema));
  // Text parts are coerced with `+value`, which reads `0x10`, `1e3` and ` 7` as numbers.
  const decimal = httpPart === 'body' ? [] : integerProperties(schema);
  const checked = ((data: unknown) => {
    const nulAt = findNul(data);
    if (nulAt !== undefined) {
      checked.errors = [refusal(nulAt, 'must not contain NUL characters')];
      return false;
    }
    const notDecimal = decimal.find((name) => {
      const value = (data as Record<string, unknown> | null)?.[name];
      return typeof value === 'string' && !/^-?\d{1,20}$/.test(value);
    });
    if (notDecimal !== undefined) {
      checked.errors = [refusal(`/${notDecimal}`, 'must be a decimal integer')];
      return false;
    }
    const valid = validate(data);
    checked.errors = validate.errors ?? null;
    return valid;
  }) as ValidateFunction;
  return checked;
};

function refusal(instancePath: string, message: string): ErrorObject {
  return { keyword: 'input', instancePath, schemaPath: '#', params: {}, message };
}

function integerProperties(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.entries(properties)
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
}

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
    } else if (error.keyword === 'propertyNames') {
      const name = (error.params as { propertyName?: string }).propertyName;
      if (name !== undefined) path = `${path}/${name}`;
      message = 'is not an allowed name';
    }
    return { path: path.replace(/\/+$/, '') || '/', message };
  });
}
