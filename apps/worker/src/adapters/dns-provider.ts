/**
 * Public DNS records of services: an A record per host name (`<name>.<APPS_DOMAIN>` and each
 * custom domain) pointing at PUBLIC_IP. Providers mark what they create as owned by the service,
 * so `removeRecords` deletes exactly those and never a record someone else made. `none` is for
 * installations whose DNS is managed elsewhere (a wildcard record, or `*.localhost` in dev).
 */
export interface DnsReport {
  published: string[];
  /** Names left alone, with why (outside every zone of the server, or a record we do not own). */
  skipped: { name: string; reason: string }[];
}

export interface DnsProvider {
  /** Makes `names` point at the platform and removes this service's records for other names. */
  upsertRecords(serviceId: string, names: string[]): Promise<DnsReport>;
  /** Removes every record owned by the service; missing ones are fine. */
  removeRecords(serviceId: string): Promise<void>;
  /**
   * For the reconciler: the services among `wanted` that lack a record they would get from
   * upsertRecords (a name in a zone, not held by someone else's record, without theirs). Providers
   * that cannot tell omit it.
   */
  findMissing?(wanted: { serviceId: string; names: string[] }[]): Promise<Set<string>>;
}

export const noDns: DnsProvider = {
  async upsertRecords() {
    return { published: [], skipped: [] };
  },
  async removeRecords() {},
};
