import { compileErrors, validate } from '@readme/openapi-parser';
import type { FastifyInstance, RouteOptions } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { ProblemSchema } from '../http/schemas.js';
import { createHarness, type Harness } from '../test-support/harness.js';

// The OpenAPI document is generated from the route schemas, so this walks every registered /api
// route: each must carry the schemas that apply to it and appear in a document that validates
// against the OpenAPI 3.1 meta-schema.
let h: Harness;
let app: FastifyInstance;
let document: OpenApiDocument;
const routes: RouteOptions[] = [];

interface Operation {
  parameters?: { in: string; name: string }[];
  requestBody?: { required?: boolean };
  responses: Record<string, { content?: Record<string, unknown> }>;
  security?: unknown[];
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, { type: string; scheme?: string; in?: string; name?: string }>;
  };
}

/** POSTs that act on the resource in the path and take no body. */
const BODILESS = new Set([
  'POST /api/services/:id/start',
  'POST /api/services/:id/stop',
  'POST /api/services/:id/restart',
  'POST /api/services/:id/redeploy',
  'POST /api/deployments/:id/cancel',
  'POST /api/auth/logout',
  'POST /api/nodes/:id/drain',
  'POST /api/nodes/:id/activate',
  // Notifications (issue 15 part 4).
  'POST /api/notification-subscriptions/:id/rotate-secret',
  'POST /api/notification-deliveries/:id/redeliver',
  'POST /api/services/:id/webhook',
  // Custom-domain ownership (issue 34): the check takes nothing but the path.
  'POST /api/services/:id/custom-domains/:domain/verify',
  // Backups (issue 33): the run's settings come from the service's release, not the request.
  'POST /api/services/:id/backups',
  'POST /api/backups/:id/restore',
  'POST /api/backups/:id/verify',
  // Variable groups: redeploys every service the group is attached to.
  'POST /api/variable-groups/:id/redeploy',
  // Schedules (issue 32): run now runs the schedule as it is defined.
  'POST /api/schedules/:id/run-now',
]);
/** Collection-level GETs that return a fixed document: nothing to filter or page. */
const QUERYLESS = new Set([
  'GET /api/templates',
  'GET /api/auth/me',
  'GET /api/auth/api-keys',
  // A handful of platform certificates (docs/tls.md): nothing to page.
  'GET /api/certificates',
]);
/** The OIDC callback: the identity provider adds parameters of its own (iss, session_state, …). */
const OPEN_QUERY = new Set(['GET /api/auth/callback']);

beforeAll(async () => {
  h = await createHarness();
  // A second app over the same container, recording every route the feature modules register.
  app = await buildApp({
    logger: pino({ level: 'silent' }),
    trustProxy: false,
    authenticator: h.container.authenticator,
    keyLimits: h.container.keyLimits,
    audit: h.container.audit,
    routes: async (instance) => {
      instance.addHook('onRoute', (route) => {
        if (route.url.startsWith('/api/') && route.method !== 'HEAD') routes.push(route);
      });
      await h.container.routes(instance);
    },
  });
  await app.ready();
  const response = await app.inject({ url: '/api/openapi.json' });
  expect(response.statusCode).toBe(200);
  document = response.json<OpenApiDocument>();
});
afterAll(async () => {
  await app.close();
  await h.close();
});

const methodsOf = (route: RouteOptions) =>
  (Array.isArray(route.method) ? route.method : [route.method]).map(String);
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('GET /api/openapi.json', () => {
  it('is public and validates against the OpenAPI 3.1 schema', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('documents the bearer API key and the session cookie', () => {
    expect(document.components.securitySchemes).toMatchObject({
      apiKey: { type: 'http', scheme: 'bearer' },
      session: { type: 'apiKey', in: 'cookie', name: '__Host-session' },
    });
  });

  it('has the feature routes to check', () => {
    expect(routes.length).toBeGreaterThan(10);
  });
});

describe('every /api route', () => {
  it('appears in the document with its security', () => {
    for (const route of routes) {
      for (const method of methodsOf(route)) {
        const operation = document.paths[openApiPath(route.url)]?.[method.toLowerCase()];
        expect(operation, `${method} ${route.url} is missing from the document`).toBeDefined();
        const isPublic = route.config?.permission === 'public';
        expect(operation?.security, `${method} ${route.url}`).toEqual(
          isPublic ? [] : [{ apiKey: [] }, { session: [] }],
        );
      }
    }
  });

  it('declares a params schema naming every path parameter', () => {
    for (const route of routes) {
      const names = [...route.url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
      if (names.length === 0) continue;
      const params = route.schema?.params as { properties?: Record<string, unknown> } | undefined;
      expect(params, `${route.url} has path parameters but no params schema`).toBeDefined();
      for (const name of names) expect(Object.keys(params?.properties ?? {}), route.url).toContain(name);
    }
  });

  it('declares a body schema for writes that take one, closed to unknown fields', () => {
    for (const route of routes) {
      for (const method of methodsOf(route)) {
        if (!['POST', 'PUT', 'PATCH'].includes(method)) continue;
        const id = `${method} ${route.url}`;
        const body = route.schema?.body as { additionalProperties?: unknown } | undefined;
        if (BODILESS.has(id)) {
          expect(body, `${id} is listed as bodiless`).toBeUndefined();
          continue;
        }
        expect(body, `${id} declares no body schema`).toBeDefined();
        expect(body?.additionalProperties, `${id} body must set additionalProperties: false`).toBe(false);
      }
    }
  });

  it('declares a query schema for reads that take one, closed to unknown parameters', () => {
    for (const route of routes) {
      for (const method of methodsOf(route)) {
        if (method !== 'GET') continue;
        const id = `${method} ${route.url}`;
        const query = route.schema?.querystring as
          { additionalProperties?: unknown; properties?: object } | undefined;
        const ok = (route.schema?.response as Record<string, { properties?: object }> | undefined)?.['200'];
        // A page of a list must take page/per_page.
        if (ok?.properties && 'page' in ok.properties && 'per_page' in ok.properties) {
          expect(Object.keys(query?.properties ?? {}), `${id} returns pages`).toEqual(
            expect.arrayContaining(['page', 'per_page']),
          );
        }
        if (query === undefined) {
          // One resource by id has nothing to filter; a collection must say what it accepts.
          const isSingleResource = /\/:[A-Za-z0-9_]+$/.test(route.url);
          expect(isSingleResource || QUERYLESS.has(id), `${id} declares no querystring schema`).toBe(true);
          continue;
        }
        if (OPEN_QUERY.has(id)) continue;
        expect(query.additionalProperties, `${id} querystring must set additionalProperties: false`).toBe(
          false,
        );
      }
    }
  });

  it('declares a success response and problem+json for every error response', () => {
    for (const route of routes) {
      const id = `${methodsOf(route).join(',')} ${route.url}`;
      const response = (route.schema?.response ?? {}) as Record<string, unknown>;
      const statuses = Object.keys(response).map(Number);
      expect(
        statuses.some((s) => s >= 200 && s < 400),
        `${id} declares no success response`,
      ).toBe(true);
      for (const status of statuses.filter((s) => s >= 400)) {
        expect(response[String(status)], `${id} ${status} is not the Problem schema`).toBe(ProblemSchema);
      }
      if (route.config?.permission !== 'public') {
        expect(statuses, `${id} must document 401 and 403`).toEqual(expect.arrayContaining([401, 403]));
      }
      for (const method of methodsOf(route)) {
        const operation = document.paths[openApiPath(route.url)]?.[method.toLowerCase()];
        for (const [code, documented] of Object.entries(operation?.responses ?? {})) {
          if (Number(code) >= 400)
            expect(Object.keys(documented.content ?? {}), `${id} ${code}`).toEqual([
              'application/problem+json',
            ]);
        }
      }
    }
  });

  it('documents the Idempotency-Key header and its 409/422 on the idempotent routes', () => {
    const idempotent = routes.filter((route) => route.config?.idempotent === true);
    expect(idempotent.map((route) => route.url).sort()).toEqual([
      // A restore into a new service creates one: the create's Idempotency-Key rules.
      '/api/backups/:id/clone',
      '/api/services',
      '/api/services/:id/redeploy',
      '/api/services/:id/rollback',
      '/api/services/:id/schedules',
      '/api/variable-groups',
      '/api/variable-groups/:id/redeploy',
    ]);
    for (const route of idempotent) {
      const operation = document.paths[openApiPath(route.url)]?.post;
      expect(operation?.parameters).toEqual(
        expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'Idempotency-Key' })]),
      );
      expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(['409', '422']));
    }
  });
});

describe('conditional changes', () => {
  it('declares If-Match and the 412 on every route that honours it, and on no other', () => {
    const declaring = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) =>
          (operation.parameters ?? []).some((p) => p.in === 'header' && p.name === 'If-Match'),
        )
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    // The routes that read the header: a group's edit, attach and detach (docs/secrets.md#variable-groups).
    expect(declaring.sort()).toEqual([
      'PATCH /api/variable-groups/{id}',
      'POST /api/variable-groups/{id}/attach',
      'POST /api/variable-groups/{id}/detach',
    ]);
    for (const route of routes.filter((r) => r.config?.conditional === true)) {
      const method = String(route.method).toLowerCase();
      expect(Object.keys(document.paths[openApiPath(route.url)]?.[method]?.responses ?? {})).toContain('412');
    }
  });
});

describe('optional bodies', () => {
  it('documents the rollback body as optional and every other body as required', () => {
    const bodies = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation.requestBody !== undefined)
        .map(([method, operation]) => [`${method} ${path}`, operation.requestBody?.required]),
    );
    expect(bodies).toContainEqual(['post /api/services/{id}/rollback', false]);
    expect(bodies.filter(([, required]) => required !== true)).toHaveLength(1);
  });
});

describe('GET /api/docs', () => {
  it('serves the page and swagger-ui from this origin, without credentials', async () => {
    const page = await app.inject({ url: '/api/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const sources = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(sources.length).toBeGreaterThan(2);
    for (const source of sources) {
      expect(source.startsWith('/api/docs/'), `${source} is not served locally`).toBe(true);
      expect((await app.inject({ url: source })).statusCode, source).toBe(200);
    }
  });

  it('serves only the listed assets', async () => {
    expect((await app.inject({ url: '/api/docs/assets/package.json' })).statusCode).toBe(400);
    expect((await app.inject({ url: '/api/docs/assets/..%2Fpackage.json' })).statusCode).toBe(400);
  });
});
