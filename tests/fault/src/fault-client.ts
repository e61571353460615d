/**
 * A JSON client over several API replicas (round robin), as a CI pipeline behind a load balancer
 * would see them. Network errors are answers too: status 0, so the scenario can count them.
 */
export interface Reply<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
  ms: number;
}

export function createFaultClient(baseUrls: string[], key: string) {
  let next = 0;
  async function request<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Reply<T>> {
    const base = baseUrls[next++ % baseUrls.length]!;
    const started = Date.now();
    try {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      return {
        status: response.status,
        body: (text ? JSON.parse(text) : null) as T,
        headers: response.headers,
        ms: Date.now() - started,
      };
    } catch {
      return { status: 0, body: null as T, headers: new Headers(), ms: Date.now() - started };
    }
  }
  return {
    request,
    get: <T = Record<string, unknown>>(path: string) => request<T>('GET', path),
    post: <T = Record<string, unknown>>(path: string, body?: unknown) => request<T>('POST', path, body),
    delete: (path: string) => request('DELETE', path),
  };
}

export type FaultClient = ReturnType<typeof createFaultClient>;
