// API process: load config → build the container → build the app → listen; drain on SIGTERM.
import pino from 'pino';
import {
  ApiConfigSchema,
  assertProductionSafe,
  ConfigError,
  installProcessGuard,
  loadConfig,
} from '@hostctl/config';
import { SecretsKeyError } from '@hostctl/db';
import { buildApp, LOG_REDACTIONS } from './app.js';
import { createContainer } from './container.js';

const config = configOrExit();
const logger = pino({ level: config.LOG_LEVEL, redact: LOG_REDACTIONS });
installProcessGuard(logger);
const container = await startContainer();
const app = await buildApp({
  logger,
  trustProxy: config.TRUST_PROXY,
  authenticator: container.authenticator,
  keyLimits: container.keyLimits,
  audit: container.audit,
  plugins: container.plugins,
  routes: container.routes,
}).catch(didNotStart);

/**
 * Settings that cannot work stop the start with each problem named (exit 2, as the worker's),
 * before anything connects: a production API with development settings must not start at all.
 * Caught here so that the operator reads the problems, not the bundle's minified source line.
 */
function configOrExit() {
  try {
    const loaded = loadConfig(ApiConfigSchema);
    assertProductionSafe(loaded);
    return loaded;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
}

/**
 * Any other start failure (a port taken, a database down) may pass on a restart: exit so the
 * supervisor starts the API again. The process guard would otherwise keep alive an API that never
 * listens.
 */
function didNotStart(error: unknown): never {
  logger.fatal({ err: String(error) }, 'the API did not start');
  console.error('the API did not start:', error);
  process.exit(1);
}

/** A key that does not open the data at rest stops the start with the reason (docs/secrets.md). */
async function startContainer() {
  try {
    const started = createContainer(config, logger);
    await started.verifyKeys();
    return started;
  } catch (error) {
    if (!(error instanceof SecretsKeyError)) didNotStart(error);
    logger.fatal({ reason: error.message }, 'cannot start: secrets key');
    console.error(error.message);
    process.exit(2);
  }
}

let closing = false;
async function shutdown(signal: string): Promise<void> {
  if (closing) return;
  closing = true;
  logger.info({ signal }, 'shutting down');
  // Bounded: a stuck connection must not keep a replica alive forever.
  const timer = setTimeout(() => process.exit(1), 10_000);
  timer.unref();
  await app.close();
  await container.close();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

await app.listen({ host: config.API_HOST, port: config.API_PORT }).catch(didNotStart);
