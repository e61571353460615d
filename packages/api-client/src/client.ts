import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import { ProblemError } from './problem.js';
import type { paths } from './schema.js';

/**
 * The typed client of the hostctl API: `api.GET('/api/services/{id}', { params: { path: { id } } })`.
 * Paths, path and query parameters, request bodies and response bodies all come from the
 * generated schema, so a change to the API's OpenAPI document that a caller does not follow is a
 * type error in that caller. Each caller brings its own transport: the dashboard same-origin
 * cookies, the CLI a bearer token and its guarded fetch (apps/cli/src/client/api-client.ts).
 */
export type ApiClient = Client<paths>;

export function createApiClient(options: ClientOptions): ApiClient {
  return createClient<paths>(options);
}

/** Resolves to the response body, or throws the API's problem as a ProblemError. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || error !== undefined) throw ProblemError.from(response.status, error);
  return data as T;
}
