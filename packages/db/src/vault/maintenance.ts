import type { Db } from '../client.js';
import type { KeyEncryptionKeys } from './key-encryption-keys.js';

/**
 * Online upkeep of what is at rest: sealing rows written before encryption existed, and re-wrapping
 * data keys (the customers' and the platform's) after the operator changed the key-encryption key. Both work row by row with
 * conditional updates, so deploys and edits keep running meanwhile and two runs never conflict.
 */

const BATCH = 200;

export interface SealReport {
  services: number;
  deployments: number;
  /** Platform certificates whose private key or ACME account key was still PEM text. */
  certificates: number;
}

/**
 * Seals every plaintext variables map, recorded release variables and plan environment. A row
 * changed meanwhile by a (sealing) write is skipped by the update's condition: no write is lost.
 */
export async function sealPlaintextRows(db: Db): Promise<SealReport> {
  const report: SealReport = { services: 0, deployments: 0, certificates: 0 };
  for (;;) {
    const rows = await db.$queryRawUnsafe<{ id: string; variables: unknown }[]>(
      `SELECT id, variables FROM services
       WHERE NOT (variables ? '$enc') AND variables <> '{}'::jsonb LIMIT ${BATCH}`,
    );
    if (rows.length === 0) break;
    for (const row of rows) {
      // The client seals the value; the condition makes the write apply only to the value read.
      const done = await db.service.updateMany({
        where: { id: row.id, variables: { equals: row.variables as object } },
        data: { variables: row.variables as object },
      });
      report.services += done.count;
    }
    if (rows.length < BATCH) break;
  }
  let after = '';
  for (;;) {
    const rows = await db.$queryRawUnsafe<{ id: string }[]>(
      `SELECT id FROM deployments
       WHERE id > $1 AND (
         (source_variables IS NOT NULL AND jsonb_typeof(source_variables) = 'object' AND NOT (source_variables ? '$enc'))
         OR (plan IS NOT NULL AND jsonb_typeof(plan -> 'containers') = 'array'
             AND EXISTS (SELECT 1 FROM jsonb_array_elements(plan -> 'containers') c
                         WHERE jsonb_typeof(c -> 'environment') = 'object' AND NOT ((c -> 'environment') ? '$enc'))))
       ORDER BY id LIMIT ${BATCH}`,
      after,
    );
    if (rows.length === 0) break;
    for (const row of rows) {
      await db.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM deployments WHERE id = ${row.id} FOR UPDATE`;
        const current = await tx.deployment.findUnique({
          where: { id: row.id },
          select: { plan: true, sourceVariables: true },
        });
        if (!current) return;
        // Read opened, written sealed: the extension seals whatever is still plain.
        await tx.deployment.update({
          where: { id: row.id },
          data: {
            ...(current.plan !== null ? { plan: current.plan as object } : {}),
            ...(current.sourceVariables !== null
              ? { sourceVariables: current.sourceVariables as object }
              : {}),
          },
        });
        report.deployments += 1;
      });
    }
    after = rows[rows.length - 1]?.id ?? after;
    if (rows.length < BATCH) break;
  }
  report.certificates = await sealCertificateKeys(db);
  return report;
}

/**
 * The platform's certificates (a handful of rows): each one whose key or account key is still a
 * PEM string is read and written back under its row lock, so a renewal meanwhile is not undone.
 */
async function sealCertificateKeys(db: Db): Promise<number> {
  const rows = await db.$queryRaw<{ name: string }[]>`
    SELECT name FROM tls_certificates
    WHERE jsonb_typeof(private_key_pem) = 'string' OR jsonb_typeof(account_key_pem) = 'string'`;
  let sealed = 0;
  for (const row of rows) {
    await db.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT name FROM tls_certificates WHERE name = ${row.name} FOR UPDATE`;
      const current = await tx.tlsCertificate.findUnique({
        where: { name: row.name },
        select: { privateKeyPem: true, accountKeyPem: true },
      });
      if (!current) return;
      // Read opened, written sealed: the extension seals whatever is still a string.
      await tx.tlsCertificate.update({
        where: { name: row.name },
        data: {
          ...(typeof current.privateKeyPem === 'string' ? { privateKeyPem: current.privateKeyPem } : {}),
          ...(typeof current.accountKeyPem === 'string' ? { accountKeyPem: current.accountKeyPem } : {}),
        },
      });
      sealed += 1;
    });
  }
  return sealed;
}

export interface RewrapReport {
  /** Data keys now wrapped with the current key-encryption key. */
  rewrapped: number;
  /** Data keys wrapped with the current key already. */
  current: number;
  kekId: string;
}

/**
 * Re-wraps every data key still wrapped with a retired key-encryption key under the current one.
 * Sealed values do not change (their data keys do not), so this is one small row per customer.
 * The retired key must stay configured until this reports zero left; then it can be removed.
 */
export async function rewrapDataKeys(db: Db, keys: KeyEncryptionKeys): Promise<RewrapReport> {
  const stale = await db.dataKey.findMany({ where: { kekId: { not: keys.currentId } } });
  let rewrapped = 0;
  for (const row of stale) {
    const plain = await keys.unwrap(row.kekId, Buffer.from(row.wrapped), row.customerId);
    const next = await keys.wrap(plain, row.customerId);
    const done = await db.dataKey.updateMany({
      where: { id: row.id, kekId: row.kekId },
      data: { kekId: next.kekId, wrapped: new Uint8Array(next.wrapped), rewrappedAt: new Date() },
    });
    rewrapped += done.count;
  }
  const current = await db.dataKey.count({ where: { kekId: keys.currentId } });
  return { rewrapped, current: current - rewrapped, kekId: keys.currentId };
}
