import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { PUBLIC } from '@hostctl/auth-policy';
import { ProblemSchema } from '../http/schemas.js';
import { registerDocsRoutes } from '../modules/docs/docs.routes.js';
import { registerDeprecationHeaders } from './deprecation.js';
import { rewriteResponses } from './openapi-responses.js';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_PATTERN } from './idempotency.js';

export const API_VERSION = '1.0.0';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route honours `If-Match` with the ETag that its resource's GET answers (412 when it names
     * a version that is no longer current); the document declares the header.
     */
    conditional?: boolean;
  }
}

const { $id: _id, ...problemComponent } = ProblemSchema as typeof ProblemSchema & { $id?: string };

/**
 * OpenAPI 3.1 from the route schemas: the routes stay the single source of truth. Must be
 * registered before the routes (it collects them in an onRoute hook). Only /api is documented: the
 * health probes are operational endpoints, not part of the contract. Also serves the document at
 * /api/openapi.json and the browsable docs at /api/docs, and the Deprecation/Sunset headers.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'hostctl API',
        version: API_VERSION,
        description:
          'Service hosting control plane. Errors are RFC 9457 problem details (`application/problem+json`) ' +
          'with a stable `code`. Changes under /api are additive; removals are announced with `Deprecation` ' +
          'and `Sunset` headers (docs/versioning.md).',
      },
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'hsk_…',
            description: 'An API key (`Authorization: Bearer hsk_…`). It acts with its user’s current role.',
          },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: '__Host-session',
            description:
              'Browser session from the OIDC sign-in (`GET /api/auth/login`). Cookie-authenticated writes must ' +
              'send a same-origin `Origin` header. A request carrying two session cookies is refused (401).',
          },
        },
        schemas: { Problem: problemComponent },
      },
      tags: [
        { name: 'services', description: 'Create, deploy, operate and delete services' },
        { name: 'deployments', description: 'Deployment progress, logs, history and cancel' },
        { name: 'templates', description: 'The template catalog' },
        { name: 'auth', description: 'Sign-in, sessions and API keys' },
      ],
    },
    transform: ({ schema, url, route }) => {
      if (!url.startsWith('/api/') || schema?.hide === true)
        return { schema: { ...schema, hide: true }, url };
      const permission = route.config?.permission;
      const idempotent = route.config?.idempotent === true;
      const conditional = route.config?.conditional === true;
      const headers = {
        type: 'object',
        properties: {
          ...(idempotent ? idempotencyHeaders.properties : {}),
          ...(conditional ? { 'If-Match': IF_MATCH } : {}),
        },
      };
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      return {
        url,
        schema: {
          ...schema,
          operationId: operationId(String(methods[0]), url),
          tags: [tagOf(url)],
          security: permission === PUBLIC ? [] : AUTHENTICATED,
          'x-permission': permission,
          ...(route.config?.deprecated ? { deprecated: true } : {}),
          ...(idempotent ? { 'x-idempotent': true } : {}),
          ...(idempotent || conditional ? { headers } : {}),
        },
      };
    },
    transformObject: (document) =>
      rewriteResponses('openapiObject' in document ? document.openapiObject : document.swaggerObject),
  });
  registerDocsRoutes(app);
  // Deprecations are part of the published contract: one route flag drives the document and the headers.
  registerDeprecationHeaders(app);
}

const AUTHENTICATED: { [scheme: string]: string[] }[] = [{ apiKey: [] }, { session: [] }];

const IF_MATCH = {
  type: 'string',
  description:
    'Makes the change conditional: the resource\'s ETag as read (`"3"`, a list of them, or `*`). A version ' +
    'that is no longer current is a 412 and nothing is written.',
};

const idempotencyHeaders = {
  type: 'object',
  properties: {
    [titleCase(IDEMPOTENCY_HEADER)]: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      pattern: IDEMPOTENCY_KEY_PATTERN.source.replace('{1,255}', '+'),
      description:
        'Makes the request safe to retry: the first 2xx response for this key is replayed (with ' +
        '`Idempotent-Replayed: true`) for 24 hours. Scoped to your user and this route; reusing it with a ' +
        'different request is a 422.',
    },
  },
};

function tagOf(url: string): string {
  const segment = url.split('/')[2] ?? '';
  if (segment === 'deployments' || url.endsWith('/logs') || url.endsWith('/deployments'))
    return 'deployments';
  return segment;
}

/** `POST /api/services/:id/redeploy` → `postServicesByIdRedeploy`: stable, readable client method names. */
export function operationId(method: string, url: string): string {
  const words = url
    .replace(/^\/api\//, '')
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith(':') ? `by-${part.slice(1)}` : part))
    .flatMap((part) => part.split(/[-_.]/))
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1));
  return method.toLowerCase() + words.join('');
}

function titleCase(header: string): string {
  return header.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}
