export interface CaddyTlsOptions {
  adminUrl: string;
  serverName: string;
  /** Names this installation's loaded certificate (QUEUE_PREFIX): installations sharing a Caddy keep theirs. */
  instance: string;
  /** The HTTPS listener added to the server, e.g. `127.0.0.1:443` or `:443`. */
  httpsListen: string;
}

/**
 * The certificate and the HTTPS listener in Caddy, through its admin API (Caddy keeps runtime
 * changes in memory, so every sweep checks them again). The HTTPS address joins the server that
 * holds the service routes: Caddy serves TLS on every listener of a server with connection
 * policies except the HTTP port, so port 80 keeps answering plain HTTP with the same routes.
 */
export function createCaddyTls(options: CaddyTlsOptions) {
  const admin = options.adminUrl.replace(/\/$/, '');
  const server = `${admin}/config/apps/http/servers/${encodeURIComponent(options.serverName)}`;
  const id = `hostctl-tls-${options.instance}`;

  async function call(method: string, url: string, body?: unknown): Promise<Response> {
    return fetch(url, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
  }
  async function must(method: string, url: string, body?: unknown): Promise<void> {
    const response = await call(method, url, body);
    const text = await response.text();
    if (!response.ok)
      throw new Error(`Caddy ${method} ${url.slice(admin.length)}: ${response.status} ${text.slice(0, 200)}`);
  }

  return {
    /** Loads (or replaces) this installation's certificate; nothing happens when Caddy has it already. */
    async load(certificatePem: string, privateKeyPem: string): Promise<boolean> {
      const entry = { '@id': id, certificate: certificatePem, key: privateKeyPem, tags: [id] };
      const existing = await call('GET', `${admin}/id/${id}`);
      if (existing.ok) {
        const loaded = (await existing.json()) as { certificate?: string };
        if (loaded.certificate === certificatePem) return false;
        await must('PATCH', `${admin}/id/${id}`, entry);
        return true;
      }
      await existing.text();
      // The tls app may not exist yet: append to its list, else create the list, else the app.
      const appended = await call('POST', `${admin}/config/apps/tls/certificates/load_pem`, entry);
      await appended.text();
      if (appended.ok) return true;
      const list = await call('PUT', `${admin}/config/apps/tls/certificates`, { load_pem: [entry] });
      await list.text();
      if (list.ok) return true;
      await must('PUT', `${admin}/config/apps/tls`, { certificates: { load_pem: [entry] } });
      return true;
    },

    /** Adds the HTTPS listener and a TLS 1.2+ connection policy to the routes' server when missing. */
    async ensureHttps(): Promise<void> {
      if (options.httpsListen === '') return;
      const listen = (await (await call('GET', `${server}/listen`)).json()) as string[] | null;
      if (!listen) throw new Error(`Caddy has no server ${options.serverName}`);
      const policies = (await (await call('GET', `${server}/tls_connection_policies`)).json()) as
        unknown[] | null;
      if (!policies) await must('PUT', `${server}/tls_connection_policies`, [{ protocol_min: 'tls1.2' }]);
      if (!listen.includes(options.httpsListen)) {
        await must('PATCH', `${server}/listen`, [...listen, options.httpsListen]);
      }
    },
  };
}

export type CaddyTls = ReturnType<typeof createCaddyTls>;
