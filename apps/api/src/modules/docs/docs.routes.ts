import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

/** Files of the swagger-ui-dist package the page needs; served from our own origin, never a CDN. */
const ASSETS = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
} as const;
type AssetName = keyof typeof ASSETS;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>hostctl API</title>
<link rel="icon" href="/api/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/api/docs/assets/swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: swagger-ui would otherwise send the document to an outside validator.
const INIT = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  withCredentials: true,
});
`;

// The page loads only same-origin scripts; swagger-ui sets inline styles and data: images.
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'";

/** The swagger-ui-dist directory: resolved through node_modules (the image copies it beside the bundle). */
export function swaggerUiDir(): string {
  return path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/** GET /api/openapi.json (the OpenAPI 3.1 document) and the browsable docs at /api/docs. */
export function registerDocsRoutes(instance: FastifyInstance, deps: { assetsDir?: string } = {}): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const cache = new Map<AssetName, Buffer>();
  const hidden = { hide: true };

  app.get('/api/openapi.json', {
    config: { permission: 'public' },
    schema: hidden,
    handler: async (_request, reply) =>
      reply.type('application/json; charset=utf-8').send(instance.swagger()),
  });

  app.get('/api/docs', {
    config: { permission: 'public' },
    schema: hidden,
    handler: async (_request, reply) =>
      reply.type('text/html; charset=utf-8').header('content-security-policy', CSP).send(PAGE),
  });

  app.get('/api/docs/init.js', {
    config: { permission: 'public' },
    schema: hidden,
    handler: async (_request, reply) => reply.type('application/javascript; charset=utf-8').send(INIT),
  });

  app.get('/api/docs/assets/:file', {
    config: { permission: 'public' },
    schema: {
      ...hidden,
      params: Type.Object({ file: Type.Unsafe<AssetName>({ type: 'string', enum: Object.keys(ASSETS) }) }),
    },
    handler: async (request, reply) => {
      const file = request.params.file;
      let content = cache.get(file);
      if (content === undefined) {
        content = await readFile(path.join(deps.assetsDir ?? swaggerUiDir(), file));
        cache.set(file, content);
      }
      return reply.type(ASSETS[file]).send(content);
    },
  });
}
