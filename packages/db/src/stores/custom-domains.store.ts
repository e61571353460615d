import type { Db } from '../client.js';
import { isUniqueViolation } from '../errors.js';

/** Where a custom domain stands in its proof of ownership (docs/tls.md#custom-domains). */
export type CustomDomainStatus = 'pending' | 'verified';

export interface CustomDomainState {
  name: string;
  status: CustomDomainStatus;
  /** What the owner publishes at _hostctl-challenge.<name> (TXT). */
  token: string;
  lastError: string | null;
  checkedAt: Date | null;
  verifiedAt: Date | null;
}

/** A service's HTTPS settings with the custom domains that can answer HTTPS (a certificate exists). */
export interface ServiceHttps {
  redirect: boolean;
  hstsMaxAge: number | null;
  certifiedDomains: string[];
}

/** The outcome of one DNS check: proof seen, or why not (shown to the customer). */
export type DomainCheck = { verified: true } | { verified: false; error: string };

export type CustomDomainsStore = ReturnType<typeof createCustomDomainsStore>;

const STATE = {
  name: true,
  status: true,
  token: true,
  lastError: true,
  checkedAt: true,
  verifiedAt: true,
} as const;

/** The rows hold no customer id: callers resolve the service in the caller's scope first. */
export function createCustomDomainsStore(db: Db) {
  const toState = (row: { status: string } & Omit<CustomDomainState, 'status'>): CustomDomainState => ({
    ...row,
    status: row.status === 'verified' ? 'verified' : 'pending',
  });

  return {
    async list(serviceId: string): Promise<CustomDomainState[]> {
      const rows = await db.customDomainVerification.findMany({
        where: { serviceId },
        select: STATE,
        orderBy: { name: 'asc' },
      });
      return rows.map(toState);
    },

    async find(serviceId: string, name: string): Promise<CustomDomainState | null> {
      const row = await db.customDomainVerification.findUnique({
        where: { serviceId_name: { serviceId, name } },
        select: STATE,
      });
      return row ? toState(row) : null;
    },

    /**
     * Records a check of a pending domain. Returns `conflict` when another service holds the name
     * verified already (the partial unique index decides, not a read before the write), and null
     * when the domain is no longer the service's (removed meanwhile).
     */
    async recordCheck(
      serviceId: string,
      name: string,
      check: DomainCheck,
    ): Promise<CustomDomainState | 'conflict' | null> {
      const now = new Date();
      const data = check.verified
        ? { status: 'verified', lastError: null, checkedAt: now, verifiedAt: now }
        : { lastError: check.error, checkedAt: now };
      try {
        const updated = await db.customDomainVerification.updateMany({
          where: { serviceId, name, status: 'pending' },
          data,
        });
        if (updated.count === 0 && !(await this.find(serviceId, name))) return null;
      } catch (error) {
        if (isUniqueViolation(error)) return 'conflict';
        throw error;
      }
      return this.find(serviceId, name);
    },

    /**
     * Frees names that other services claimed but never verified within `ttlMs` (a squatter's
     * claim does not hold a name forever; docs/tls.md#custom-domains): each such name is dropped
     * from its holder's custom_domains, which the claims trigger turns into no claim and no
     * verification row, and the holder's event log says why. Verified claims are never touched.
     * Row locks on the verification rows keep a verification that is committing from being
     * released under it. Answers the names freed.
     */
    async releaseStalePendingClaims(
      names: string[],
      exceptServiceId: string,
      ttlMs: number,
    ): Promise<string[]> {
      if (names.length === 0) return [];
      const cutoff = new Date(Date.now() - ttlMs);
      return db.$transaction(async (tx) => {
        const stale = await tx.$queryRaw<{ service_id: string; name: string }[]>`
          SELECT service_id, name FROM custom_domain_verifications
          WHERE name = ANY(${names}::text[]) AND service_id <> ${exceptServiceId}
            AND status = 'pending' AND created_at < ${cutoff}
          ORDER BY service_id, name
          FOR UPDATE`;
        for (const row of stale) {
          await tx.$executeRaw`
            UPDATE services SET custom_domains = ARRAY(
              SELECT d FROM unnest(custom_domains) AS d WHERE lower(rtrim(d, '.')) <> ${row.name})
            WHERE id = ${row.service_id}`;
          await tx.serviceEvent.create({
            data: {
              serviceId: row.service_id,
              type: 'custom_domain',
              status: 'released',
              message: `Custom domain ${row.name} was released: it stayed unverified longer than the claim lifetime and another service asked for it`,
            },
          });
        }
        return stale.map((row) => row.name);
      });
    },

    /**
     * The custom domains each service may be routed under: verified ones only. A service with
     * none is absent from the map.
     */
    async routableDomains(serviceIds: readonly string[]): Promise<Map<string, string[]>> {
      const result = new Map<string, string[]>();
      if (serviceIds.length === 0) return result;
      const rows = await db.customDomainVerification.findMany({
        where: { serviceId: { in: [...serviceIds] }, status: 'verified' },
        select: { serviceId: true, name: true },
        orderBy: { name: 'asc' },
      });
      for (const row of rows) result.set(row.serviceId, [...(result.get(row.serviceId) ?? []), row.name]);
      return result;
    },

    /** Every verified name of every service: the names the worker holds a certificate for. */
    async verifiedNames(): Promise<string[]> {
      const rows = await db.customDomainVerification.findMany({
        where: { status: 'verified', service: { deletedAt: null } },
        select: { name: true },
        orderBy: { name: 'asc' },
      });
      return [...new Set(rows.map((row) => row.name))];
    },

    /**
     * What the proxy needs to serve each service over HTTPS: its redirect and HSTS settings, and
     * its verified domains that have a certificate (the apps name always has the wildcard). A
     * service that is gone is absent.
     */
    async httpsOptions(serviceIds: readonly string[]): Promise<Map<string, ServiceHttps>> {
      const result = new Map<string, ServiceHttps>();
      if (serviceIds.length === 0) return result;
      const rows = await db.$queryRaw<
        { id: string; https_redirect: boolean; hsts_max_age: number | null; certified: string[] }[]
      >`
        SELECT s.id, s.https_redirect, s.hsts_max_age,
          COALESCE(array_agg(v.name ORDER BY v.name) FILTER (WHERE c.name IS NOT NULL), '{}') AS certified
        FROM services s
        LEFT JOIN custom_domain_verifications v ON v.service_id = s.id AND v.status = 'verified'
        LEFT JOIN tls_certificates c ON c.name = v.name AND c.certificate_pem IS NOT NULL
        WHERE s.id = ANY(${[...serviceIds]}::text[])
        GROUP BY s.id`;
      for (const row of rows)
        result.set(row.id, {
          redirect: row.https_redirect,
          hstsMaxAge: row.hsts_max_age,
          certifiedDomains: row.certified,
        });
      return result;
    },
  };
}
