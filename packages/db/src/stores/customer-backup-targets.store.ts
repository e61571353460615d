import type { CustomerScope } from '@hostctl/auth-policy';
import type { Db } from '../client.js';
import { isUniqueViolation } from '../errors.js';

/**
 * A customer's own S3 bucket for its backups (docs/backups.md#a-customers-own-target). The
 * credentials are sealed by the client's vault on every write and opened on every read, so this
 * store only ever sees plain values; the API never answers them.
 */
export interface CustomerBackupTargetFields {
  endpoint: string;
  bucket: string;
  prefix: string;
  region: string;
  caPem: string | null;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface OwnBackupTarget extends CustomerBackupTargetFields {
  customerId: string;
  createdAt: Date;
  updatedAt: Date;
}

export type CustomerBackupTargetsStore = ReturnType<typeof createCustomerBackupTargetsStore>;

interface Row {
  customerId: string;
  endpoint: string;
  bucket: string;
  prefix: string;
  region: string;
  caPem: string | null;
  credentials: unknown;
  createdAt: Date;
  updatedAt: Date;
}

function toTarget(row: Row): OwnBackupTarget {
  const { credentials, ...rest } = row;
  const keys = (credentials ?? {}) as { access_key_id?: unknown; secret_access_key?: unknown };
  return {
    ...rest,
    accessKeyId: typeof keys.access_key_id === 'string' ? keys.access_key_id : '',
    secretAccessKey: typeof keys.secret_access_key === 'string' ? keys.secret_access_key : '',
  };
}

/** True when the scope may see the customer: another customer's is simply not there. */
const sees = (scope: CustomerScope, customerId: string) =>
  scope.kind === 'all' || (scope.kind === 'customer' && scope.customerId === customerId);

export function createCustomerBackupTargetsStore(db: Db) {
  return {
    /** The customer, when it exists and the scope may see it. */
    async customerVisible(scope: CustomerScope, customerId: string): Promise<boolean> {
      if (!sees(scope, customerId)) return false;
      return (await db.customer.count({ where: { id: customerId } })) === 1;
    },

    async find(scope: CustomerScope, customerId: string): Promise<OwnBackupTarget | null> {
      if (!sees(scope, customerId)) return null;
      const row = await db.customerBackupTarget.findUnique({ where: { customerId } });
      return row ? toTarget(row) : null;
    },

    async put(customerId: string, fields: CustomerBackupTargetFields): Promise<OwnBackupTarget> {
      const { accessKeyId, secretAccessKey, ...plain } = fields;
      const credentials = { access_key_id: accessKeyId, secret_access_key: secretAccessKey };
      const upsert = () =>
        db.customerBackupTarget.upsert({
          where: { customerId },
          create: { customerId, ...plain, credentials },
          update: { ...plain, credentials },
        });
      // Two first writes at once: the loser's insert conflicts, and its second try updates.
      const row = await upsert().catch((error: unknown) => {
        if (isUniqueViolation(error)) return upsert();
        throw error;
      });
      return toTarget(row);
    },

    /**
     * Changes the target under its row lock: `decide` sees the row as it is while no other write
     * can land (whether the stored secret may stay depends on where the row points), and answers
     * the columns to change; null when there is no target. A throw from `decide` writes nothing.
     * The credentials are written only when both keys are given: kept ones keep their sealed bytes.
     */
    async change(
      customerId: string,
      decide: (stored: OwnBackupTarget) => Partial<CustomerBackupTargetFields>,
    ): Promise<OwnBackupTarget | null> {
      return db.$transaction(async (tx) => {
        const locked = await tx.$queryRaw<{ customer_id: string }[]>`
          SELECT customer_id FROM customer_backup_targets WHERE customer_id = ${customerId} FOR UPDATE`;
        if (locked.length === 0) return null;
        const row = await tx.customerBackupTarget.findUniqueOrThrow({ where: { customerId } });
        const { accessKeyId, secretAccessKey, ...plain } = decide(toTarget(row));
        const credentials =
          accessKeyId !== undefined && secretAccessKey !== undefined
            ? { credentials: { access_key_id: accessKeyId, secret_access_key: secretAccessKey } }
            : {};
        return toTarget(
          await tx.customerBackupTarget.update({ where: { customerId }, data: { ...plain, ...credentials } }),
        );
      });
    },

    async remove(customerId: string): Promise<void> {
      await db.customerBackupTarget.deleteMany({ where: { customerId } });
    },
  };
}

/** The worker's read: the customer's target as it is now (for a backup, or to check a restore's). */
export function createWorkerBackupTargetsStore(db: Db) {
  return {
    async forCustomer(customerId: string): Promise<OwnBackupTarget | null> {
      const row = await db.customerBackupTarget.findUnique({ where: { customerId } });
      return row ? toTarget(row) : null;
    },
  };
}
export type WorkerBackupTargetsStore = ReturnType<typeof createWorkerBackupTargetsStore>;
