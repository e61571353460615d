import {
  SerializerSelector,
  type SerializerFactory,
  type Serializer,
} from '@fastify/fast-json-stringify-compiler';

const compileEach = SerializerSelector();

/**
 * Fastify's own serializer factory, compiling each response schema object once. By default every
 * route compiles a serializer per status code, and every authenticated route lists the same
 * ProblemSchema for 4–9 statuses (http/schemas.ts's problemResponses): about 20 KB of generated
 * code each, 16 MiB of the API's idle heap at ~100 routes (heap snapshot, docs/performance.md#memory).
 * A serializer depends only on its schema (and the context's shared schemas, which this factory is
 * built with), so one compiled function per schema object serves every route that names it.
 */
export const buildSharedSerializer: SerializerFactory = (externalSchemas, options) => {
  const compile = compileEach(externalSchemas, options);
  const compiled = new WeakMap<object, Serializer>();
  return (route) => {
    const schema = route.schema;
    if (typeof schema !== 'object' || schema === null) return compile(route);
    let serializer = compiled.get(schema);
    if (!serializer) {
      serializer = compile(route);
      compiled.set(schema, serializer);
    }
    return serializer;
  };
};
