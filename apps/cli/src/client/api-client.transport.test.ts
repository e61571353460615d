import { describe, expect, it } from 'vitest';
import { EXIT } from '../exit-codes.js';
import { TOKEN } from '../test-support/fake-api.js';
import { createApiClient, NetworkError } from './api-client.js';

/**
 * The transport under the typed client: a request that gets no answer ends at its own time limit
 * (long-polls set theirs with withTimeout), and a network failure whose message quotes the token
 * (as some fetch errors quote a header) reaches the CI log with the token masked.
 */
const client = (fetchImpl: typeof fetch) =>
  createApiClient({ baseUrl: 'https://api.test', token: TOKEN, userAgent: 'test', fetchImpl });

describe('the CLI transport', () => {
  it('gives up on a request that is never answered, at the limit set for it', async () => {
    // Answers only by failing when the request's own signal aborts it.
    const silent = ((_url: URL, init?: RequestInit) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error));
      })) as typeof fetch;
    const failure = await client(silent)
      .withTimeout(50)
      .GET('/api/auth/me')
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NetworkError);
    expect((failure as NetworkError).message).toBe('no answer from the API at https://api.test in time');
    expect((failure as NetworkError).exitCode).toBe(EXIT.failed);
  });

  it('masks the token in a network error that quotes it', async () => {
    const quoting = (async () => {
      throw new TypeError('fetch failed', { cause: { message: `bad header "Bearer ${TOKEN}"` } });
    }) as typeof fetch;
    const failure = await client(quoting)
      .api.GET('/api/auth/me')
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NetworkError);
    expect((failure as NetworkError).message).toContain('bad header "Bearer ***"');
    expect((failure as NetworkError).message).not.toContain(TOKEN);
  });
});
