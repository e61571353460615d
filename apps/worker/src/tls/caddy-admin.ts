import http from 'node:http';

interface CaddyAnswer {
  ok: boolean;
  status: number;
  text: string;
}

/**
 * Calls to Caddy's admin API for the TLS side (certificates, listener, challenge answers). A
 * connection of its own per call (agent: false), as in adapters/caddy-routes.ts: Caddy closes its
 * admin connections when a config change is applied, and a pooled keep-alive socket then fails
 * the next call ("other side closed").
 */
export function createCaddyAdmin(adminUrl: string) {
  const admin = adminUrl.replace(/\/$/, '');
  const call = (method: string, path: string, body?: unknown) =>
    new Promise<CaddyAnswer>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const request = http.request(
        `${admin}${path}`,
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

  return {
    call,
    async must(method: string, path: string, body?: unknown): Promise<void> {
      const response = await call(method, path, body);
      if (!response.ok)
        throw new Error(`Caddy ${method} ${path}: ${response.status} ${response.text.slice(0, 200)}`);
    },
    async json<T>(path: string): Promise<T | null> {
      const response = await call('GET', path);
      return response.ok ? (JSON.parse(response.text) as T) : null;
    },
    /** Deletes every object with this @id (Caddy accepts duplicates); a missing one is success. */
    async removeId(id: string): Promise<void> {
      for (let attempt = 0; attempt < 10; attempt += 1) {
        const response = await call('DELETE', `/id/${encodeURIComponent(id)}`);
        if (response.status === 404) return;
        if (!response.ok)
          throw new Error(`Caddy DELETE /id/${id}: ${response.status} ${response.text.slice(0, 200)}`);
      }
      throw new Error(`Caddy still has ${id} after 10 removals`);
    },
  };
}
