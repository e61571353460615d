import type { WorkerConfig } from '@hostctl/config';
import {
  createWorkerBackupTargetsStore,
  createWorkerBackupsStore,
  createWorkerCloneStore,
  type AdvisoryLocks,
  type Db,
  type WorkerDeploymentStore,
  type WorkerServiceStore,
} from '@hostctl/db';
import type { Logger } from 'pino';
import { createBackupContainers } from '../adapters/backup-containers.js';
import type { LifecycleProcessorDeps } from '../processors/lifecycle.processor.js';
import type { VolumeRunDeps } from './volume-run.js';
import type { RuntimeDriver } from '../runtime/driver.js';
import type { GitUrlOptions } from '@hostctl/source-policy';
import { createBackupProcessor } from './backup.processor.js';
import { createBackupTargets } from './backup-targets.js';
import { createLocalTarget, type BackupTarget } from './repository.js';
import type { RetentionDefaults } from './retention.js';
import { createS3Target, type S3Settings } from './s3-target.js';
import { createRestoreProcessor } from './restore.processor.js';
import { createVerifyProcessor } from './verify.processor.js';
import { createVolumeEngine } from './volume-engine.js';

type TargetConfig = S3Settings & { BACKUP_LOCAL_PATH: string };

/** The target new backups go to and restores come from (docs/backups.md#where-backups-go). */
function createBackupTarget(config: TargetConfig & { BACKUP_TARGET: 'local' | 's3' }): BackupTarget {
  return config.BACKUP_TARGET === 's3' ? createS3Target(config) : createLocalTarget(config);
}

/** The backup and restore processors of the worker (docs/backups.md), wired from its config. */
export function createBackupProcessors(options: {
  config: Pick<WorkerConfig, 'DOCKER_SOCKET' | 'BACKUP_TARGET' | 'BACKUP_IMAGE'> &
    TargetConfig &
    RetentionDefaults;
  db: Db;
  locks: AdvisoryLocks;
  services: Pick<WorkerServiceStore, 'findById' | 'setStatus'>;
  lifecycle: {
    deployments: LifecycleProcessorDeps['deployments'] &
      VolumeRunDeps['deployments'] &
      Pick<WorkerDeploymentStore, 'findById'>;
    driver: Pick<RuntimeDriver, 'lifecycle' | 'refusal' | 'execInComponent'>;
  };
  instance: string;
  logger: Logger;
  /** BACKUP_TARGET_ALLOWED_HOSTS and the control plane's endpoints, for customers' own buckets. */
  endpointPolicy: GitUrlOptions;
  /** Queues the first deployment of a service cloned from a backup, once its volumes are filled. */
  enqueueDeploy: (deploymentId: string) => Promise<void>;
}) {
  const { config } = options;
  const target = createBackupTarget(config);
  const engine = createVolumeEngine({
    containers: createBackupContainers({ socketPath: config.DOCKER_SOCKET }),
    target,
    image: config.BACKUP_IMAGE,
  });
  const targets = createBackupTargets(target.kind, {
    store: createWorkerBackupTargetsStore(options.db),
    settings: config,
    policy: options.endpointPolicy,
  });
  const deps = {
    ...options.lifecycle,
    store: createWorkerBackupsStore(options.db),
    clones: createWorkerCloneStore(options.db),
    enqueueDeploy: options.enqueueDeploy,
    services: options.services,
    locks: options.locks,
    engine,
    instance: options.instance,
    targets,
    retention: config,
    logger: options.logger,
  };
  return {
    backup: createBackupProcessor(deps),
    restore: createRestoreProcessor(deps),
    verify: createVerifyProcessor(deps),
  };
}
