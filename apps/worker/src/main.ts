// Worker process entry: load config → build the app → start workers, reconciler and health
// endpoints → on SIGTERM/SIGINT let running jobs finish within a bound, then exit.
import { ConfigError, WorkerConfigSchema, installProcessGuard, loadConfig } from '@hostctl/config';
import { SecretsKeyError } from '@hostctl/db';
import { AllowlistError } from '@hostctl/source-policy';
import { EgressPolicyError } from './egress/egress-policy.js';
import { createWorkerApp, type WorkerApp } from './worker-app.js';

const SHUTDOWN_GRACE_MS = 25_000;

let config;
try {
  config = loadConfig(WorkerConfigSchema);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(2);
}

let app: WorkerApp;
try {
  app = createWorkerApp(config);
  installProcessGuard(app.logger);
  await app.start();
} catch (error) {
  // A malformed allowlist, settings that contradict each other (registry credentials), or a
  // worker that cannot enforce the egress policy and so must not run tenant code, or keys that do
  // not open the data at rest: say why and stop.
  if (
    error instanceof AllowlistError ||
    error instanceof SecretsKeyError ||
    error instanceof EgressPolicyError ||
    error instanceof ConfigError
  ) {
    console.error(error.message);
    process.exit(2);
  }
  // Anything else (an engine that refused a network, a database down at start) may pass on a
  // restart: exit so the supervisor starts it again. The process guard installed above would
  // otherwise keep a worker alive that never started, never ready and never consuming.
  console.error('the worker did not start:', error);
  process.exit(1);
}
app.logger.info(
  { healthPort: app.healthPort, concurrency: config.WORKER_CONCURRENCY, prefix: config.QUEUE_PREFIX },
  'worker started',
);

let isStopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (isStopping) return;
    isStopping = true;
    app.logger.info({ signal }, 'shutting down');
    // Last resort if a dependency hangs the shutdown: unfinished jobs are retried elsewhere anyway.
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS + 5000).unref();
    app
      .close(SHUTDOWN_GRACE_MS)
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        app.logger.error({ err: String(error) }, 'shutdown failed');
        process.exit(1);
      });
  });
}
