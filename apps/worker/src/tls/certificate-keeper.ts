import { createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import type { AdvisoryLocks, StoredCertificate, TlsCertificatesStore } from '@hostctl/db';
import type { Logger } from 'pino';
import { messageOf } from '../pipeline/step-errors.js';
import type { IssuedCertificate } from './acme-client.js';
import type { CaddyTls } from './caddy-tls.js';
import type { AccountKey } from './jws.js';

export interface CertificateKeeperDeps {
  store: Pick<
    TlsCertificatesStore,
    'find' | 'saveIssued' | 'saveFailure' | 'saveAccountKey' | 'noteExpiring'
  >;
  locks: Pick<AdvisoryLocks, 'tryAcquire'>;
  acme: { issue(key: AccountKey, names: readonly string[]): Promise<IssuedCertificate> };
  /** Absent without CADDY_ADMIN_URL: the certificate is kept, nothing loads it. */
  caddy?: Pick<CaddyTls, 'load' | 'ensureHttps'>;
  appsDomain: string;
  logger: Logger;
  now?: () => Date;
}

export interface KeeperOutcome {
  issued: boolean;
  /** Caddy received the certificate in this round (it had another one, or none). */
  loaded: boolean;
}

/** certificate.expiring goes out this long before not_after (issue 34): a renewal normally came long before. */
const EXPIRY_WARNING_DAYS = 14;

/** Renewal at two thirds of the lifetime: a third of it is left to retry a failing CA. */
function renewAfter(notBefore: Date, notAfter: Date): Date {
  return new Date(notBefore.getTime() + ((notAfter.getTime() - notBefore.getTime()) * 2) / 3);
}

/**
 * Keeps `*.<APPS_DOMAIN>` (docs/tls.md): ordered when there is none or its renewal time came,
 * by one replica at a time (advisory lock, state read again under it so a replica that waited
 * does not order a second one), then loaded into Caddy by every replica. A failed order keeps the
 * certificate that serves and records the error for the next round to retry.
 */
export function createCertificateKeeper(deps: CertificateKeeperDeps) {
  const name = `*.${deps.appsDomain.replace(/\.$/, '')}`;
  const now = deps.now ?? (() => new Date());
  const isDue = (current: StoredCertificate | null) =>
    !current?.certificatePem || !current.renewAfter || current.renewAfter.getTime() <= now().getTime();

  async function accountKey(current: StoredCertificate | null): Promise<AccountKey> {
    if (current?.accountKeyPem) {
      const privateKey = createPrivateKey(current.accountKeyPem);
      return { privateKey, publicKey: createPublicKey(privateKey) };
    }
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await deps.store.saveAccountKey(
      name,
      pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
    return pair;
  }

  async function issueUnderLock(): Promise<boolean> {
    const lease = await deps.locks.tryAcquire(`hostctl:tls:${name}`);
    if (!lease) return false;
    try {
      const current = await deps.store.find(name);
      if (!isDue(current)) return false;
      try {
        const issued = await deps.acme.issue(await accountKey(current), [name]);
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

  return {
    name,
    async runOnce(): Promise<KeeperOutcome> {
      const issued = isDue(await deps.store.find(name)) ? await issueUnderLock() : false;
      // Every replica asks; the store's conditional update lets exactly one of them send it. A
      // failure here must not keep the certificate from Caddy: logged, asked again next round.
      const expiring = await deps.store.noteExpiring(name, EXPIRY_WARNING_DAYS).catch((error: unknown) => {
        deps.logger.warn({ name, err: messageOf(error) }, 'tls: expiry check failed');
        return false;
      });
      if (expiring)
        deps.logger.warn(
          { name },
          `tls: certificate expires within ${EXPIRY_WARNING_DAYS} days; certificate.expiring sent`,
        );
      const current = await deps.store.find(name);
      let loaded = false;
      if (deps.caddy && current?.certificatePem && current.privateKeyPem) {
        loaded = await deps.caddy.load(current.certificatePem, current.privateKeyPem);
        await deps.caddy.ensureHttps();
      }
      return { issued, loaded };
    },
  };
}
