import { compileErrors, validate } from '@readme/openapi-parser';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerOpenApi } from './openapi.js';

// The versioning policy's removal path (docs/versioning.md) on a small app with the real plugin.
let app: FastifyInstance;
const deprecated = {
  since: '2026-01-15T00:00:00Z',
  sunset: '2026-07-31T00:00:00Z',
  link: 'https://hostctl.example/docs/versioning',
};

beforeAll(async () => {
  app = Fastify();
  await registerOpenApi(app);
  app.get('/api/old', {
    config: { permission: 'public', deprecated },
    schema: { response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } },
    handler: async () => ({ ok: true }),
  });
  app.get('/api/new', {
    config: { permission: 'public' },
    schema: { response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } },
    handler: async () => ({ ok: true }),
  });
  await app.ready();
});
afterAll(async () => app.close());

describe('a deprecated route', () => {
  it('answers with Deprecation, Sunset and a deprecation link', async () => {
    const response = await app.inject({ url: '/api/old' });
    expect(response.statusCode).toBe(200);
    expect(response.headers.deprecation).toBe(`@${Date.parse(deprecated.since) / 1000}`);
    expect(response.headers.sunset).toBe('Fri, 31 Jul 2026 00:00:00 GMT');
    expect(response.headers.link).toBe(`<${deprecated.link}>; rel="deprecation"`);
  });

  it('is flagged in the OpenAPI document, which still validates', async () => {
    const document = (await app.inject({ url: '/api/openapi.json' })).json<{
      paths: Record<string, { get: { deprecated?: boolean } }>;
    }>();
    expect(document.paths['/api/old']?.get.deprecated).toBe(true);
    expect(document.paths['/api/new']?.get.deprecated).toBeUndefined();
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('leaves other routes alone', async () => {
    const response = await app.inject({ url: '/api/new' });
    expect(response.headers.deprecation).toBeUndefined();
    expect(response.headers.sunset).toBeUndefined();
  });

  it('refuses to boot with dates that do not parse', async () => {
    const broken = Fastify();
    await registerOpenApi(broken);
    expect(() =>
      broken.get(
        '/api/broken',
        { config: { permission: 'public', deprecated: { since: 'soon', sunset: 'later' } } },
        async () => ({}),
      ),
    ).toThrow(/invalid deprecation dates/);
    await broken.close();
  });
});
