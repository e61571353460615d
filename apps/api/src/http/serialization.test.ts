import { describe, expect, it } from 'vitest';
import { ProblemSchema } from './schemas.js';
import { buildSharedSerializer } from './serialization.js';

// Every authenticated route names the same ProblemSchema for several statuses; compiling it once
// per route and status held 16 MiB of the API's idle heap (docs/performance.md#memory).
const compile = buildSharedSerializer({}, {});
const route = (url: string, httpStatus: string, schema: unknown) => ({
  method: 'GET',
  url,
  httpStatus,
  schema,
});

describe('response serializers', () => {
  it('one compiled serializer serves every route and status that names the same schema', () => {
    const first = compile(route('/api/services', '404', ProblemSchema));
    expect(compile(route('/api/services/:id', '403', ProblemSchema))).toBe(first);
    expect(compile(route('/api/keys', '429', ProblemSchema))).toBe(first);
  });

  it('a different schema, even an equal-looking one, gets its own serializer', () => {
    const shared = compile(route('/a', '200', ProblemSchema));
    const other = { type: 'object', properties: { name: { type: 'string' } } };
    const own = compile(route('/b', '200', other));
    expect(own).not.toBe(shared);
    expect(compile(route('/c', '200', { ...other }))).not.toBe(own);
  });

  it('serializes as Fastify would: fields of the schema only, in its types', () => {
    const serialize = compile(
      route('/x', '200', { type: 'object', properties: { count: { type: 'integer' } } }),
    );
    expect(JSON.parse(serialize({ count: '7', secret: 'not in the schema' }))).toEqual({ count: 7 });
  });
});
