import type { WorkerConfig } from '@hostctl/config';
import { createWorkerBackupsStore, type AdvisoryLocks, type Db, type WorkerServiceStore } from '@hostctl/db';
import type { Logger } from 'pino';
import { createBackupContainers } from '../adapters/backup-containers.js';
import type { LifecycleProcessorDeps } from '../processors/lifecycle.processor.js';
import { createBackupProcessor } from './backup.processor.js';
import { createLocalTarget } from './repository.js';
import { createRestoreProcessor } from './restore.processor.js';
import { createVolumeEngine } from './volume-engine.js';

/** The backup and restore processors of the worker (docs/backups.md), wired from its config. */
export function createBackupProcessors(options: {
  config: Pick<
    WorkerConfig,
    'DOCKER_SOCKET' | 'RUNTIME' | 'BACKUP_LOCAL_PATH' | 'BACKUP_KEY' | 'BACKUP_IMAGE'
  >;
  db: Db;
  locks: AdvisoryLocks;
  services: Pick<WorkerServiceStore, 'findById' | 'setStatus'>;
  lifecycle: Pick<LifecycleProcessorDeps, 'release' | 'deployments' | 'swarm'>;
  logger: Logger;
}) {
  const { config } = options;
  const engine = createVolumeEngine({
    containers: createBackupContainers({ socketPath: config.DOCKER_SOCKET }),
    target: createLocalTarget(config),
    image: config.BACKUP_IMAGE,
  });
  const deps = {
    ...options.lifecycle,
    store: createWorkerBackupsStore(options.db),
    services: options.services,
    locks: options.locks,
    engine,
    instance: options.lifecycle.release.instance,
    isSwarm: config.RUNTIME === 'swarm',
    logger: options.logger,
  };
  return { backup: createBackupProcessor(deps), restore: createRestoreProcessor(deps) };
}
