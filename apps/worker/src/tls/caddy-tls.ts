import { createCaddyAdmin } from './caddy-admin.js';

export interface CaddyTlsOptions {
  adminUrl: string;
  serverName: string;
  /** Names this installation's loaded certificates (QUEUE_PREFIX): installations sharing a Caddy keep theirs. */
  instance: string;
  /** The HTTPS listener added to the server, e.g. `127.0.0.1:443` or `:443`. */
  httpsListen: string;
}

interface LoadedPem {
  '@id'?: string;
  certificate?: string;
  tags?: string[];
}

/**
 * The certificates and the HTTPS listener in Caddy, through its admin API (Caddy keeps runtime
 * changes in memory, so every sweep checks them again). One `load_pem` entry per certificate: the
 * wildcard's `@id` is `hostctl-tls-<instance>`, a custom domain's `hostctl-tls-<instance>--<name>`
 * (tagged `hostctl-domain-<instance>` so the ones of dropped domains can be found and unloaded);
 * Caddy picks the entry whose names match the SNI. The HTTPS address joins the server that holds
 * the service routes: Caddy serves TLS on every listener of a server with connection policies
 * except the HTTP port, so port 80 keeps answering plain HTTP with the same routes.
 */
export function createCaddyTls(options: CaddyTlsOptions) {
  const caddy = createCaddyAdmin(options.adminUrl);
  const server = `/config/apps/http/servers/${encodeURIComponent(options.serverName)}`;
  const wildcardId = `hostctl-tls-${options.instance}`;
  const domainTag = `hostctl-domain-${options.instance}`;
  const domainId = (name: string) => `${wildcardId}--${name}`;

  /** Loads or replaces one entry; nothing happens when Caddy has that certificate already. */
  async function loadEntry(entry: { '@id': string; certificate: string; key: string; tags: string[] }) {
    const path = `/id/${encodeURIComponent(entry['@id'])}`;
    const loaded = await caddy.json<LoadedPem>(path);
    if (loaded) {
      if (loaded.certificate === entry.certificate) return false;
      await caddy.must('PATCH', path, entry);
      return true;
    }
    // The tls app may not exist yet: append to its list, else create the list, else the app.
    if ((await caddy.call('POST', '/config/apps/tls/certificates/load_pem', entry)).ok) return true;
    if ((await caddy.call('PUT', '/config/apps/tls/certificates', { load_pem: [entry] })).ok) return true;
    await caddy.must('PUT', '/config/apps/tls', { certificates: { load_pem: [entry] } });
    return true;
  }

  return {
    /** Loads (or replaces) this installation's wildcard; false when Caddy has it already. */
    load(certificatePem: string, privateKeyPem: string): Promise<boolean> {
      return loadEntry({
        '@id': wildcardId,
        certificate: certificatePem,
        key: privateKeyPem,
        tags: [wildcardId],
      });
    },

    /** Loads (or replaces) the certificate of one custom domain; false when Caddy has it already. */
    loadDomain(name: string, certificatePem: string, privateKeyPem: string): Promise<boolean> {
      return loadEntry({
        '@id': domainId(name),
        certificate: certificatePem,
        key: privateKeyPem,
        tags: [domainTag],
      });
    },

    /** Unloads this installation's custom-domain certificates whose name is not in `keep`; answers them. */
    async unloadDomainsExcept(keep: ReadonlySet<string>): Promise<string[]> {
      const entries = (await caddy.json<LoadedPem[] | null>('/config/apps/tls/certificates/load_pem')) ?? [];
      const wanted = new Set([...keep].map(domainId));
      const stale = [
        ...new Set(
          entries
            .filter((entry) => entry.tags?.includes(domainTag) && entry['@id'] && !wanted.has(entry['@id']))
            .map((entry) => entry['@id']!),
        ),
      ];
      for (const id of stale) await caddy.removeId(id);
      return stale.map((id) => id.slice(wildcardId.length + 2));
    },

    /** Adds the HTTPS listener and a TLS 1.2+ connection policy to the routes' server when missing. */
    async ensureHttps(): Promise<void> {
      if (options.httpsListen === '') return;
      const listen = await caddy.json<string[] | null>(`${server}/listen`);
      if (!listen) throw new Error(`Caddy has no server ${options.serverName}`);
      const policies = await caddy.json<unknown[] | null>(`${server}/tls_connection_policies`);
      if (!policies)
        await caddy.must('PUT', `${server}/tls_connection_policies`, [{ protocol_min: 'tls1.2' }]);
      if (!listen.includes(options.httpsListen)) {
        await caddy.must('PATCH', `${server}/listen`, [...listen, options.httpsListen]);
      }
    },
  };
}

export type CaddyTls = ReturnType<typeof createCaddyTls>;
