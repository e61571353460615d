import {
  createApiClient as createTypedClient,
  readProblem,
  type ApiClient as TypedApi,
} from '@hostctl/api-client';
import { CliError, EXIT, type ExitCode } from '../exit-codes.js';

/** An RFC 9457 problem answer (docs/api-decisions.md), or a non-JSON error answer. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
    /** Seconds from Retry-After on 429/503, when the API sent it. */
    readonly retryAfterSeconds: number | undefined,
  ) {
    super(message, exitCodeForHttpStatus(status));
  }
}

/** The API could not be reached or did not answer in time. */
export class NetworkError extends CliError {
  constructor(message: string) {
    super(message, EXIT.failed);
  }
}

export function exitCodeForHttpStatus(status: number): ExitCode {
  return status === 401 || status === 403 ? EXIT.auth : EXIT.failed;
}

/** Worth asking again within a wait: the answer may differ in a few seconds. */
export function isTransient(error: unknown): boolean {
  if (error instanceof NetworkError) return true;
  return error instanceof ApiError && [429, 502, 503, 504].includes(error.status);
}

/**
 * The API as the CLI calls it: the typed client of @hostctl/api-client (paths, parameters and
 * bodies checked against the OpenAPI document at typecheck) over a guarded transport. Any answer
 * but a 2xx is thrown (ApiError, NetworkError) before the typed client sees it, so
 * `must(client.api.GET(…))` is the success body or an error with the exit code of docs/ci.md.
 */
export interface ApiClient {
  readonly baseUrl: string;
  /** Requests bounded by the default time limit. */
  readonly api: TypedApi;
  /** The same API with another bound per request: long-polls pass their wait plus a margin. */
  withTimeout(timeoutMs: number): TypedApi;
  /** The bearer header for the WebSocket handshake; never printed. */
  authorization(): string;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * A client bound to one API and one bearer token. `fetchImpl` is injectable so the unit tests can
 * answer without a network; the CLI passes Node's fetch.
 */
export function createApiClient(options: {
  baseUrl: string;
  token: string;
  userAgent: string;
  fetchImpl?: typeof fetch;
}): ApiClient {
  // Checked before any request: fetch refuses such a header with an error whose message quotes the
  // whole value, token included, and that message would reach a CI log.
  if (!/^[\x21-\x7e]+$/.test(options.token))
    throw new CliError(
      'the API token holds a space, a line break, a control or a non-ASCII character, so it is not an API key; check HOSTCTL_TOKEN, HOSTCTL_TOKEN_FILE (one line) or the stored login',
      EXIT.usage,
    );
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const fetchImpl = options.fetchImpl ?? fetch;

  /** Sends what the typed client built, and lets only a 2xx answer with a JSON body (or none) back. */
  async function guardedFetch(request: Request, timeoutMs: number): Promise<Response> {
    const url = new URL(request.url);
    // The path as the command named it, for messages: without the base URL's own path or the query.
    const path = url.pathname.slice(new URL(baseUrl).pathname.replace(/\/+$/, '').length);
    const { method } = request;
    const body = request.body === null ? undefined : await request.text();
    let response: Response;
    try {
      response = await fetchImpl(url, {
        method,
        headers: request.headers,
        // Never followed: a redirect to another origin would resend the body (a compose file, the
        // service's variables) there, and the answer would come from a server HOSTCTL_URL does not
        // name. The API itself never redirects an /api request.
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
        ...(body !== undefined ? { body } : {}),
      });
    } catch (error) {
      throw new NetworkError(describeNetworkError(baseUrl, error).replaceAll(options.token, '***'));
    }
    const text = await response.text().catch(() => '');
    if (response.status >= 300 && response.status < 400) throw redirectError(baseUrl, method, path, response);
    if (!response.ok) throw problemError(response, text);
    if (text === '') return new Response(null, { status: response.status });
    try {
      JSON.parse(text);
    } catch {
      throw new ApiError(
        response.status,
        undefined,
        `the API answered ${method} ${path} with something that is not JSON`,
        undefined,
      );
    }
    return new Response(text, { status: response.status, headers: { 'content-type': 'application/json' } });
  }

  const typedApi = (timeoutMs: number): TypedApi =>
    createTypedClient({
      baseUrl,
      headers: {
        authorization: `Bearer ${options.token}`,
        accept: 'application/json, application/problem+json',
        'user-agent': options.userAgent,
      },
      redirect: 'manual',
      fetch: (request) => guardedFetch(request, timeoutMs),
    });

  return {
    baseUrl,
    api: typedApi(DEFAULT_TIMEOUT_MS),
    withTimeout: typedApi,
    authorization: () => `Bearer ${options.token}`,
  };
}

/** A 3xx: said, with where it pointed, and not followed (see the fetch above). */
function redirectError(baseUrl: string, method: string, path: string, response: Response): ApiError {
  const location = response.headers.get('location');
  const where = location ? ` to ${location}` : '';
  return new ApiError(
    response.status,
    undefined,
    `the server at ${baseUrl} answered ${method} ${path} with a redirect (${response.status})${where}; hostctl does not follow redirects: set HOSTCTL_URL to the API's own address`,
    undefined,
  );
}

/** "title: detail" from a problem body; the status line when the body is not a problem. */
function problemError(response: Response, text: string): ApiError {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a proxy's HTML error page: fall back to the status line
  }
  const problem = readProblem(parsed);
  const title = problem.title ?? `${response.status} ${response.statusText}`.trim();
  const detail = problem.detail !== null && problem.detail !== title ? `: ${problem.detail}` : '';
  const requestId = problem.requestId !== null ? ` (request id ${problem.requestId})` : '';
  const retryAfter = Number(response.headers.get('retry-after'));
  return new ApiError(
    response.status,
    problem.code ?? undefined,
    `${title}${detail}${requestId}`,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}

function describeNetworkError(baseUrl: string, error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if ((error as Error).name === 'TimeoutError') return `no answer from the API at ${baseUrl} in time`;
  const reason = cause?.code ?? cause?.message ?? (error as Error).message;
  return `cannot reach the API at ${baseUrl} (${reason}); check HOSTCTL_URL`;
}
