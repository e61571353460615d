import { customerScope, type Principal } from '@hostctl/auth-policy';
import type { OwnBackupTarget, CustomerBackupTargetsStore } from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import type { GitUrlOptions } from '@hostctl/source-policy';
import { DEFAULT_PREFIX, DEFAULT_REGION, checkTargetFields, credentialsFor } from './backup-target.rules.js';
import type { BackupTarget, BackupTargetBody, BackupTargetPatch } from './backup-target.schemas.js';

export type BackupTargetService = ReturnType<typeof createBackupTargetService>;

/**
 * A customer's own backup target (docs/backups.md#a-customers-own-target): set, changed, read and
 * removed by admins and operators who may manage the customer (`customers:manage`), 404 for
 * another customer's. Answers carry no credential, only that one is set.
 */
export function createBackupTargetService(deps: {
  store: CustomerBackupTargetsStore;
  /** BACKUP_TARGET_ALLOWED_HOSTS and the control plane's endpoints. */
  endpointPolicy: GitUrlOptions;
}) {
  async function customerOr404(principal: Principal, customerId: string): Promise<void> {
    if (!(await deps.store.customerVisible(customerScope(principal), customerId)))
      throw new DomainError('not_found', `customer ${customerId} not found`);
  }

  return {
    async get(principal: Principal, customerId: string): Promise<BackupTarget> {
      await customerOr404(principal, customerId);
      const target = await deps.store.find(customerScope(principal), customerId);
      if (!target)
        throw new DomainError('not_found', `customer ${customerId} has no backup target of its own`);
      return toAnswer(target);
    },

    /** Creates or replaces the target; the next backup goes to it (earlier ones stay where they are). */
    async put(principal: Principal, customerId: string, body: BackupTargetBody): Promise<BackupTarget> {
      await customerOr404(principal, customerId);
      // A field left out takes its default: PUT replaces the whole target.
      const fields = checkTargetFields(
        { prefix: null, region: null, ca_certificate: null, ...body },
        deps.endpointPolicy,
      );
      // Both given (the schema requires them) and checked: the fallbacks are never taken.
      const place = { endpoint: fields.endpoint ?? body.endpoint, bucket: fields.bucket ?? body.bucket };
      const stored = await deps.store.find(customerScope(principal), customerId);
      const { accessKeyId, secretAccessKey } = credentialsFor(stored, body, place);
      const saved = await deps.store.put(customerId, {
        ...place,
        prefix: fields.prefix ?? DEFAULT_PREFIX,
        region: fields.region ?? DEFAULT_REGION,
        caPem: fields.caPem ?? null,
        accessKeyId,
        secretAccessKey,
      });
      return toAnswer(saved);
    },

    /**
     * Changes the given fields only (a JSON merge onto the stored target; `null` sets prefix,
     * region or CA back to the default). The stored key pair stays unless a new one is given, and
     * only where PUT would keep it (credentialsFor). 404 when the customer has no target yet:
     * there is nothing to merge onto, and a bucket needs its keys, so PUT creates one.
     */
    async patch(principal: Principal, customerId: string, body: BackupTargetPatch): Promise<BackupTarget> {
      await customerOr404(principal, customerId);
      const fields = checkTargetFields(body, deps.endpointPolicy);
      // Decided and written under the row's lock: a PUT to another endpoint cannot land between
      // the secret rule's read and this write.
      const saved = await deps.store.change(customerId, (stored) => {
        const place = {
          endpoint: fields.endpoint ?? stored.endpoint,
          bucket: fields.bucket ?? stored.bucket,
        };
        const { kept, accessKeyId, secretAccessKey } = credentialsFor(stored, body, place);
        return { ...fields, ...(kept ? {} : { accessKeyId, secretAccessKey }) };
      });
      if (!saved)
        throw new DomainError(
          'not_found',
          `customer ${customerId} has no backup target of its own to change: PUT one first`,
        );
      return toAnswer(saved);
    },

    /**
     * New backups go to the operator's target again; those taken into the bucket need it set again
     * to restore. Idempotent: a customer without a target of its own is what was asked for.
     */
    async remove(principal: Principal, customerId: string): Promise<void> {
      await customerOr404(principal, customerId);
      await deps.store.remove(customerId);
    },
  };
}

function toAnswer(target: OwnBackupTarget): BackupTarget {
  return {
    customer_id: target.customerId,
    endpoint: target.endpoint,
    bucket: target.bucket,
    prefix: target.prefix,
    region: target.region,
    has_ca_certificate: target.caPem !== null,
    has_credentials: target.accessKeyId !== '' && target.secretAccessKey !== '',
    created_at: target.createdAt.toISOString(),
    updated_at: target.updatedAt.toISOString(),
  };
}
