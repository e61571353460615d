import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError } from '@hostctl/domain';

interface CaddyAnswer {
  ok: boolean;
  status: number;
  text: string;
}

/** The connection was cut before Caddy answered; whether the change landed is unknown. */
export class CaddyConnectionReset extends DomainError {
  constructor(cause: string) {
    super('runtime_error', `Caddy admin API unreachable: ${cause}`);
  }
}

const RESET_TRIES = 4;
const RESET_BACKOFF_MS = 50;
/**
 * Repeating these is harmless: a read, a replacement of one object, a removal by id (each removes
 * one copy; Caddy accepts duplicate ids). An insert (PUT on a list index, POST to append) is not:
 * its caller reads back instead (see caddy-routes.ts's apply).
 */
const REPEATABLE = new Set(['GET', 'PATCH', 'DELETE']);

function resetBeforeAnswer(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'EPIPE' || error.message === 'socket hang up';
}

/**
 * The one client of Caddy's admin API (routes, certificates, listener, challenge answers).
 * - A connection of its own per call (agent: false): Caddy closes its admin connections when a
 *   config change is applied, and a pooled keep-alive socket then fails the next call ("other side
 *   closed"; seen with fetch: every call after an apply or a removal failed once).
 * - Caddy 2.6 also resets the connections it holds while it applies a config, the admin API's
 *   included, and another writer's change (another worker, another test file) can land at any
 *   moment: CI lost a route listing to one `read ECONNRESET`. A repeatable call is tried again a
 *   few times, apart; anything else rejects with CaddyConnectionReset for its caller to decide.
 */
export function createCaddyAdmin(adminUrl: string, options: { timeoutMs?: number } = {}) {
  const admin = adminUrl.replace(/\/+$/, '');
  const once = (method: string, path: string, body?: unknown) =>
    new Promise<CaddyAnswer>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const request = http.request(
        `${admin}${path}`,
        {
          method,
          agent: false,
          timeout: options.timeoutMs ?? 10_000,
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
      request.on('timeout', () => request.destroy(new Error('timed out')));
      request.on('error', (error) =>
        reject(
          resetBeforeAnswer(error)
            ? new CaddyConnectionReset(error.message)
            : new DomainError('runtime_error', `Caddy admin API unreachable: ${error.message}`),
        ),
      );
      request.end(payload);
    });

  const call = async (method: string, path: string, body?: unknown): Promise<CaddyAnswer> => {
    for (let tries = 1; ; tries += 1) {
      try {
        return await once(method, path, body);
      } catch (error) {
        const again = error instanceof CaddyConnectionReset && REPEATABLE.has(method) && tries < RESET_TRIES;
        if (!again) throw error;
        await sleep(RESET_BACKOFF_MS * tries);
      }
    }
  };

  return {
    call,
    async must(method: string, path: string, body?: unknown): Promise<void> {
      const response = await call(method, path, body);
      if (!response.ok)
        throw new DomainError(
          'runtime_error',
          `Caddy refused ${method} ${path}: ${response.status} ${response.text.slice(0, 300)}`,
        );
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
          throw new DomainError(
            'runtime_error',
            `Caddy refused DELETE /id/${id}: ${response.status} ${response.text.slice(0, 300)}`,
          );
      }
      throw new DomainError('runtime_error', `Caddy still has ${id} after 10 removals`);
    },
  };
}
