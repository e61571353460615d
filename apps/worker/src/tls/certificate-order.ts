import { createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import type { AdvisoryLocks, StoredCertificate, TlsCertificatesStore } from '@hostctl/db';
import type { Logger } from 'pino';
import { messageOf } from '../pipeline/step-errors.js';
import type { IssuedCertificate } from './acme-client.js';
import type { AccountKey } from './jws.js';

/** What ordering one certificate needs, shared by the wildcard and the custom domains. */
export interface CertificateOrderDeps {
  store: Pick<
    TlsCertificatesStore,
    'find' | 'saveIssued' | 'saveFailure' | 'saveAccountKey' | 'noteExpiring'
  >;
  locks: Pick<AdvisoryLocks, 'tryAcquire'>;
  logger: Logger;
  now: () => Date;
}

/** certificate.expiring goes out this long before not_after (issue 34): a renewal normally came long before. */
const EXPIRY_WARNING_DAYS = 14;

/** Renewal at two thirds of the lifetime: a third of it is left to retry a failing CA. */
function renewAfter(notBefore: Date, notAfter: Date): Date {
  return new Date(notBefore.getTime() + ((notAfter.getTime() - notBefore.getTime()) * 2) / 3);
}

/** No certificate yet, or its renewal time has come. */
export const isDue = (current: StoredCertificate | null, now: Date) =>
  !current?.certificatePem || !current.renewAfter || current.renewAfter.getTime() <= now.getTime();

/**
 * The ACME account key kept in the row `name` (made and saved there the first time): one account
 * for every order and renewal, since CAs limit new accounts per address.
 */
export async function accountKeyOf(deps: CertificateOrderDeps, name: string): Promise<AccountKey> {
  const row = await deps.store.find(name);
  if (row?.accountKeyPem) {
    const privateKey = createPrivateKey(row.accountKeyPem);
    return { privateKey, publicKey: createPublicKey(privateKey) };
  }
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  await deps.store.saveAccountKey(name, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  return pair;
}

/**
 * Orders the certificate of `name` when it is due, by one replica at a time: the advisory lock
 * `hostctl:tls:<name>` taken without waiting (a replica that does not get it skips this round),
 * the state read again under it so a replica that got the lock just after a renewal orders
 * nothing. A failure keeps the certificate that serves and records the error (and announces the
 * first of a streak); answers whether a certificate was issued.
 */
export async function orderUnderLock(
  deps: CertificateOrderDeps,
  name: string,
  order: (current: StoredCertificate | null) => Promise<IssuedCertificate>,
): Promise<boolean> {
  const lease = await deps.locks.tryAcquire(`hostctl:tls:${name}`);
  if (!lease) return false;
  try {
    const current = await deps.store.find(name);
    if (!isDue(current, deps.now())) return false;
    try {
      const issued = await order(current);
      const leaf = new X509Certificate(issued.certificatePem);
      const notBefore = new Date(leaf.validFrom);
      const notAfter = new Date(leaf.validTo);
      await deps.store.saveIssued(name, {
        ...issued,
        issuer: leaf.issuer.replace(/\n/g, ', '),
        notBefore,
        notAfter,
        renewAfter: renewAfter(notBefore, notAfter),
      });
      deps.logger.info({ name, notAfter }, 'tls: certificate issued');
      return true;
    } catch (error) {
      const announced = await deps.store.saveFailure(name, messageOf(error));
      deps.logger.warn(
        { name, err: messageOf(error), announced },
        'tls: certificate order failed; the current one keeps serving',
      );
      return false;
    }
  } finally {
    await lease.release();
  }
}

/**
 * certificate.expiring when `name` expires within 14 days. Every replica asks; the store's
 * conditional update lets exactly one of them send it. A failure here must not keep the
 * certificate from Caddy: logged, asked again next round.
 */
export async function warnIfExpiring(deps: CertificateOrderDeps, name: string): Promise<void> {
  const expiring = await deps.store.noteExpiring(name, EXPIRY_WARNING_DAYS).catch((error: unknown) => {
    deps.logger.warn({ name, err: messageOf(error) }, 'tls: expiry check failed');
    return false;
  });
  if (expiring)
    deps.logger.warn(
      { name },
      `tls: certificate expires within ${EXPIRY_WARNING_DAYS} days; certificate.expiring sent`,
    );
}
