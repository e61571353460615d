import http from 'node:http';

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

  // A connection of its own per call (agent: false), as in caddy-routes.ts: Caddy closes its admin
  // connections when a config change is applied, and a pooled keep-alive socket then fails the
  // next call ("other side closed").
  const call = (method: string, url: string, body?: unknown) =>
    new Promise<{ ok: boolean; status: number; text: string }>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const request = http.request(
        url,
        {
          method,
          agent: false,
          timeout: 10_000,
          headers: payload === undefined ? {} : { 'content-type': 'application/json' },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            resolve({ ok: status >= 200 && status < 300, status, text });
          });
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error('Caddy admin API timed out')));
      request.on('error', reject);
      request.end(payload);
    });
  async function must(method: string, url: string, body?: unknown): Promise<void> {
    const response = await call(method, url, body);
    if (!response.ok)
      throw new Error(
        `Caddy ${method} ${url.slice(admin.length)}: ${response.status} ${response.text.slice(0, 200)}`,
      );
  }
  const json = async <T>(url: string): Promise<T | null> => {
    const response = await call('GET', url);
    return response.ok ? (JSON.parse(response.text) as T) : null;
  };

  return {
    /** Loads (or replaces) this installation's certificate; nothing happens when Caddy has it already. */
    async load(certificatePem: string, privateKeyPem: string): Promise<boolean> {
      const entry = { '@id': id, certificate: certificatePem, key: privateKeyPem, tags: [id] };
      const loaded = await json<{ certificate?: string }>(`${admin}/id/${id}`);
      if (loaded) {
        if (loaded.certificate === certificatePem) return false;
        await must('PATCH', `${admin}/id/${id}`, entry);
        return true;
      }
      // The tls app may not exist yet: append to its list, else create the list, else the app.
      if ((await call('POST', `${admin}/config/apps/tls/certificates/load_pem`, entry)).ok) return true;
      if ((await call('PUT', `${admin}/config/apps/tls/certificates`, { load_pem: [entry] })).ok) return true;
      await must('PUT', `${admin}/config/apps/tls`, { certificates: { load_pem: [entry] } });
      return true;
    },

    /** Adds the HTTPS listener and a TLS 1.2+ connection policy to the routes' server when missing. */
    async ensureHttps(): Promise<void> {
      if (options.httpsListen === '') return;
      const listen = await json<string[] | null>(`${server}/listen`);
      if (!listen) throw new Error(`Caddy has no server ${options.serverName}`);
      const policies = await json<unknown[] | null>(`${server}/tls_connection_policies`);
      if (!policies) await must('PUT', `${server}/tls_connection_policies`, [{ protocol_min: 'tls1.2' }]);
      if (!listen.includes(options.httpsListen)) {
        await must('PATCH', `${server}/listen`, [...listen, options.httpsListen]);
      }
    },
  };
}

export type CaddyTls = ReturnType<typeof createCaddyTls>;
