import createClient, { type ClientOptions, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import { ProblemError } from './problem.js';
import type { paths } from './schema.js';

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
/** The paths that have an operation for `M`. */
type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends Record<M, object> ? P : never;
}[keyof paths];
type Init<P extends keyof paths, M extends Method> = MaybeOptionalInit<paths[P], M>;
type Operation<P extends keyof paths, M extends Method> = Extract<paths[P][M], Record<string, unknown>>;

/**
 * One HTTP method of the client. openapi-fetch's own signature infers the whole `init` argument
 * as a type parameter and adds `[key: string]: unknown` to it, so a request body, a query or a
 * header the API no longer has (a renamed optional field) passes unnoticed. Here `init` is the
 * operation's own type, so TypeScript's excess property check reports any field the API does not
 * declare (tests/check/src/api-client-mismatch.test.ts).
 */
type StrictMethod<M extends Method> = <P extends PathsWith<M>>(
  url: P,
  ...init: undefined extends Init<P, M> ? [init?: Init<P, M>] : [init: Init<P, M>]
) => Promise<FetchResponse<Operation<P, M>, Init<P, M>, `${string}/${string}`>>;

/**
 * The typed client of the hostctl API: `api.GET('/api/services/{id}', { params: { path: { id } } })`.
 * Paths, path and query parameters, headers, request bodies and response bodies all come from the
 * generated schema, so a change to the API's OpenAPI document that a caller does not follow is a
 * type error in that caller. Each caller brings its own transport: the dashboard same-origin
 * cookies, the CLI a bearer token and its guarded fetch (apps/cli/src/client/api-client.ts).
 */
export interface ApiClient {
  GET: StrictMethod<'get'>;
  POST: StrictMethod<'post'>;
  PUT: StrictMethod<'put'>;
  PATCH: StrictMethod<'patch'>;
  DELETE: StrictMethod<'delete'>;
}

export function createApiClient(options: ClientOptions): ApiClient {
  // The same functions at run time; only their signatures are narrowed (see StrictMethod).
  return createClient<paths>(options) as ApiClient;
}

/** Resolves to the response body, or throws the API's problem as a ProblemError. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || error !== undefined) throw ProblemError.from(response.status, error);
  return data as T;
}
