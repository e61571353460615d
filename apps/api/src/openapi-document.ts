// Prints the OpenAPI document to stdout without listening: the API client's types
// (packages/api-client) are generated from it (scripts/gen-api-client.ts runs this as a process, so
// apps never import each other). Fixed placeholder settings keep the output the same on every
// machine and need no running service: the database is never queried, and Redis connections to the
// placeholder port simply fail until the process exits.
import pino from 'pino';
import { ApiConfigSchema, loadConfig } from '@hostctl/config';
import { buildApp } from './app.js';
import { createContainer } from './container.js';

const config = loadConfig(ApiConfigSchema, {
  NODE_ENV: 'test',
  DATABASE_URL: 'postgresql://openapi@127.0.0.1:1/openapi',
  REDIS_URL: 'redis://127.0.0.1:1',
  SESSION_SECRET: 'openapi-document-only-openapi-document-only',
  // Never used: the document is built without touching the database.
  SECRETS_KEK: Buffer.alloc(32).toString('base64'),
  LOG_LEVEL: 'silent',
});
const logger = pino({ level: 'silent' });
const container = createContainer(config, logger);
const app = await buildApp({
  logger,
  trustProxy: false,
  authenticator: container.authenticator,
  keyLimits: container.keyLimits,
  audit: container.audit,
  routes: container.routes,
});
await app.ready();
const response = await app.inject({ url: '/api/openapi.json' });
// Wait for the write to drain: process.exit() below would cut a large document short on a pipe.
await new Promise((resolve) =>
  process.stdout.write(`${JSON.stringify(response.json(), null, 2)}\n`, resolve),
);
await app.close();
await Promise.race([container.close(), new Promise((resolve) => setTimeout(resolve, 1000))]);
process.exit(response.statusCode === 200 ? 0 : 1);
