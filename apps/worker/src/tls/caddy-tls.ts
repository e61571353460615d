import { createCaddyAdmin } from '../adapters/caddy-admin.js';

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
/** The port of a Caddy listen address (`:80`, `127.0.0.1:8080`, `tcp/[::1]:80`); NaN when none. */
const portOf = (address: string): number => Number(/:(\d+)(?:-\d+)?$/.exec(address)?.[1] ?? Number.NaN);

export function createCaddyTls(options: CaddyTlsOptions) {
  const caddy = createCaddyAdmin(options.adminUrl);
  const server = `/config/apps/http/servers/${encodeURIComponent(options.serverName)}`;
  const wildcardId = `hostctl-tls-${options.instance}`;
  const domainTag = `hostctl-domain-${options.instance}`;
  const domainId = (name: string) => `${wildcardId}--${name}`;

  /**
   * Caddy serves TLS on every listener of a server with connection policies except the one on
   * its `http_port` (default 80). A plain-HTTP listener on another port (8080 behind a load
   * balancer, the bench's 39320) would answer `400 Client sent an HTTP request to an HTTPS server`
   * to every route, HTTP-01 challenges included, once the policies are added: refused loudly
   * instead, before anything changes (docs/tls.md#https-and-plain-http).
   */
  async function refuseTlsOnPlainListeners(listen: string[]): Promise<void> {
    const httpPort = (await caddy.json<number | null>('/config/apps/http/http_port')) ?? 80;
    // Listeners meant for TLS anyway: the one this worker adds, and any on Caddy's https_port.
    const tlsPorts = [
      (await caddy.json<number | null>('/config/apps/http/https_port')) ?? 443,
      portOf(options.httpsListen),
    ];
    const plain = listen.filter((address) => ![httpPort, ...tlsPorts].includes(portOf(address)));
    if (plain.length > 0)
      throw new Error(
        `Caddy server ${options.serverName} listens on ${plain.join(', ')}, not on its http_port ` +
          `${httpPort}: with HTTPS on, Caddy would serve TLS there too and plain HTTP would fail on ` +
          `every route. Set apps.http.http_port to that port (docs/tls.md).`,
      );
  }

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
      await refuseTlsOnPlainListeners(listen);
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
