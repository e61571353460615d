import type { Db } from '../client.js';
import { insertPlatformNotifications } from './notification-outbox.js';

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

/** What a customer sees of a custom domain's certificate: never the key or the PEM. */
export interface CertificateState {
  hasCertificate: boolean;
  issuer: string | null;
  notAfter: Date | null;
  lastError: string | null;
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

export interface CertificateAlerts {
  /** PLATFORM_NOTIFICATIONS_CUSTOMER_ID: whose subscriptions receive the alerts ('' : nobody's). */
  platformCustomerId: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Platform-wide rows (no customer owns them): the worker keeps them, the API lists their state.
 * The alerts (docs/tls.md#alerts) are written to the outbox in the transaction that records the
 * failure or claims the warning, so each goes out once however many replicas run the round.
 */
export function createTlsCertificatesStore(db: Db, alerts: CertificateAlerts = { platformCustomerId: '' }) {
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

    /** The state of the certificates of these names (custom domains in the API); absent: none yet. */
    async statesOf(names: readonly string[]) {
      if (names.length === 0) return new Map<string, CertificateState>();
      const rows = await db.tlsCertificate.findMany({
        where: { name: { in: [...names] } },
        select: { name: true, certificatePem: true, issuer: true, notAfter: true, lastError: true },
      });
      return new Map(
        rows.map((row): [string, CertificateState] => [
          row.name,
          {
            hasCertificate: row.certificatePem !== null,
            issuer: row.issuer,
            notAfter: row.notAfter,
            lastError: row.lastError,
          },
        ]),
      );
    },

    /** Names of every stored certificate (the wildcard's and the custom domains'). */
    async names(): Promise<string[]> {
      const rows = await db.tlsCertificate.findMany({ select: { name: true }, orderBy: { name: 'asc' } });
      return rows.map((row) => row.name);
    },

    /** Forgets certificates no name needs any more (a custom domain dropped, its service deleted). */
    async remove(names: readonly string[]): Promise<void> {
      if (names.length > 0) await db.tlsCertificate.deleteMany({ where: { name: { in: [...names] } } });
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
        // A success ends the failure streak: the next failure is announced again.
        update: {
          ...issued,
          lastError: null,
          lastAttemptAt: now,
          failureNotifiedAt: null,
          issuedCount: { increment: 1 },
        },
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

    /**
     * A failed attempt: the certificate that serves stays as it is. The first failure of a streak
     * enqueues certificate.renewal_failed (answered true); the retries after it stay quiet until
     * a success clears the streak, and certificate.expiring takes over when time runs short.
     */
    async saveFailure(name: string, error: string): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const now = new Date();
        const row = await tx.tlsCertificate.upsert({
          where: { name },
          create: { name, lastError: error, lastAttemptAt: now },
          update: { lastError: error, lastAttemptAt: now },
          select: { notAfter: true },
        });
        const streakStarts = await tx.tlsCertificate.updateMany({
          where: { name, failureNotifiedAt: null },
          data: { failureNotifiedAt: now },
        });
        if (streakStarts.count === 0) return false;
        const serving = row.notAfter
          ? `the current certificate keeps serving until ${row.notAfter.toISOString()}`
          : 'there is no certificate yet';
        await insertPlatformNotifications(tx, alerts.platformCustomerId, {
          event: 'certificate.renewal_failed',
          certificate: { name, notAfter: row.notAfter, lastError: error },
          message: `ordering the certificate ${name} failed (${error}); ${serving}. The worker retries every round.`,
        });
        return true;
      });
    },

    /**
     * certificate.expiring once per certificate (per not_after) when it expires within
     * `withinDays`: the conditional update is the claim, so concurrent replicas send it once.
     */
    async noteExpiring(name: string, withinDays: number): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const horizon = new Date(Date.now() + withinDays * DAY_MS);
        const [row] = await tx.$queryRaw<{ not_after: Date; last_error: string | null }[]>`
          UPDATE tls_certificates SET expiring_notified_for = not_after
          WHERE name = ${name} AND certificate_pem IS NOT NULL AND not_after <= ${horizon}
            AND expiring_notified_for IS DISTINCT FROM not_after
          RETURNING not_after, last_error`;
        if (!row) return false;
        const failing = row.last_error ? `; the last renewal failed: ${row.last_error}` : '';
        await insertPlatformNotifications(tx, alerts.platformCustomerId, {
          event: 'certificate.expiring',
          certificate: { name, notAfter: row.not_after, lastError: row.last_error },
          message: `the certificate ${name} expires at ${row.not_after.toISOString()} and has not been renewed${failing}`,
        });
        return true;
      });
    },
  };
}
