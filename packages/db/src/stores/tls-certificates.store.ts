import type { Db } from '../client.js';

/** A certificate the platform holds for itself, as the worker keeps it (docs/tls.md). */
export interface StoredCertificate {
  name: string;
  certificatePem: string | null;
  privateKeyPem: string | null;
  accountKeyPem: string | null;
  issuer: string | null;
  notBefore: Date | null;
  notAfter: Date | null;
  renewAfter: Date | null;
  lastError: string | null;
  lastAttemptAt: Date | null;
  issuedCount: number;
}

export interface NewCertificate {
  certificatePem: string;
  privateKeyPem: string;
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  renewAfter: Date;
}

/** A key column read through the sealing client holds the PEM string again (or nothing). */
const pemOf = (value: unknown): string | null => (typeof value === 'string' ? value : null);

export type TlsCertificatesStore = ReturnType<typeof createTlsCertificatesStore>;

/** Platform-wide rows (no customer owns them): only the worker uses this store. */
export function createTlsCertificatesStore(db: Db) {
  return {
    /** What the API shows (docs/tls.md): never the keys or the PEM. */
    listStates() {
      return db.tlsCertificate.findMany({
        select: {
          name: true,
          issuer: true,
          notBefore: true,
          notAfter: true,
          renewAfter: true,
          lastError: true,
          lastAttemptAt: true,
        },
        orderBy: { name: 'asc' },
      });
    },

    /** The keys come back opened: the client unseals them (docs/secrets.md). */
    async find(name: string): Promise<StoredCertificate | null> {
      const row = await db.tlsCertificate.findUnique({ where: { name } });
      if (!row) return null;
      return { ...row, privateKeyPem: pemOf(row.privateKeyPem), accountKeyPem: pemOf(row.accountKeyPem) };
    },

    /** A new certificate replaces the old one in one write; the error of earlier attempts is cleared. */
    async saveIssued(name: string, issued: NewCertificate): Promise<void> {
      const now = new Date();
      await db.tlsCertificate.upsert({
        where: { name },
        create: { name, ...issued, lastError: null, lastAttemptAt: now, issuedCount: 1 },
        update: { ...issued, lastError: null, lastAttemptAt: now, issuedCount: { increment: 1 } },
      });
    },

    /** The ACME account key, made once per name and kept for every renewal. */
    async saveAccountKey(name: string, accountKeyPem: string): Promise<void> {
      await db.tlsCertificate.upsert({
        where: { name },
        create: { name, accountKeyPem },
        update: { accountKeyPem },
      });
    },

    /** A failed attempt: the certificate that serves stays as it is. */
    async saveFailure(name: string, error: string): Promise<void> {
      const now = new Date();
      await db.tlsCertificate.upsert({
        where: { name },
        create: { name, lastError: error, lastAttemptAt: now },
        update: { lastError: error, lastAttemptAt: now },
      });
    },
  };
}
