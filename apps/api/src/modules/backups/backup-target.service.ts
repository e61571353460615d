import { customerScope, type Principal } from '@hostctl/auth-policy';
import type { OwnBackupTarget, CustomerBackupTargetsStore } from '@hostctl/db';
import { DomainError, validationError } from '@hostctl/domain';
import { checkBackupEndpoint, type GitUrlOptions } from '@hostctl/source-policy';
import type { BackupTarget, BackupTargetBody } from './backup-target.schemas.js';

export type BackupTargetService = ReturnType<typeof createBackupTargetService>;

// The worker's own checks of the operator's S3 target (s3-target.ts), field by field.
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const PREFIX = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
const REGION = /^[a-z0-9-]{1,40}$/;
const PEM = /^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\s*$/;

/**
 * A customer's own backup target (docs/backups.md#a-customers-own-target): set, read and removed
 * by admins and operators who may manage the customer (`customers:manage`), 404 for another
 * customer's. Answers carry no credential, only that one is set.
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
      const verdict = checkBackupEndpoint(body.endpoint, deps.endpointPolicy);
      if (!verdict.ok) throw validationError('/body/endpoint', verdict.reason);
      const { scheme, host, port } = verdict.endpoint;
      if (!BUCKET.test(body.bucket))
        throw validationError('/body/bucket', 'must be 3-63 lower-case letters, digits, dots and dashes');
      const prefix = (body.prefix ?? 'hostctl').replace(/^\/+|\/+$/g, '');
      if (prefix !== '' && !PREFIX.test(prefix))
        throw validationError(
          '/body/prefix',
          'may hold letters, digits, ".", "_", "-" and "/" between parts',
        );
      const region = body.region ?? 'us-east-1';
      if (!REGION.test(region))
        throw validationError('/body/region', 'must be lower-case letters, digits and dashes');
      const caPem = body.ca_certificate ?? null;
      if (caPem !== null && !PEM.test(caPem.trim()))
        throw validationError(
          '/body/ca_certificate',
          'must be PEM certificates (BEGIN CERTIFICATE … END CERTIFICATE)',
        );
      const stored = await deps.store.put(customerId, {
        endpoint: `${scheme}://${host}:${port}`,
        bucket: body.bucket,
        prefix,
        region,
        caPem: caPem === null ? null : `${caPem.trim()}\n`,
        accessKeyId: body.access_key_id,
        secretAccessKey: body.secret_access_key,
      });
      return toAnswer(stored);
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
