import type { WorkerConfig } from '@hostctl/config';
import { createDatabase, keyringFromSettings, sealPlaintextRows, type Db, type Vault } from '@hostctl/db';
import type { Logger } from 'pino';

/** The worker's client, sealing variables with the operator's keys (a bad key throws SecretsKeyError). */
export function openWorkerDatabase(config: WorkerConfig) {
  const keys = keyringFromSettings(config);
  return createDatabase({ url: config.DATABASE_URL, max: config.WORKER_CONCURRENCY + 2, keys });
}

/**
 * Before any job runs, the configured key-encryption keys must open the data keys at rest (a
 * wrong or missing key refuses the start with the reason: SecretsKeyError). Rows written before
 * encryption existed are then sealed online, in the background: a deploy meanwhile reads them
 * either way, and the conditional updates never overwrite a newer write (docs/secrets.md).
 */
export async function startSecrets(db: Db, vault: Vault, logger: Logger): Promise<void> {
  await vault.verify();
  void sealPlaintextRows(db)
    .then((report) => {
      if (report.services + report.deployments + report.certificates > 0)
        logger.info(report, 'sealed secrets that were stored in plaintext');
    })
    .catch((error: unknown) =>
      logger.error(
        { err: error instanceof Error ? error.message : String(error) },
        'sealing plaintext rows failed',
      ),
    );
}
