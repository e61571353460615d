import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';

/**
 * One HTTP POST of a notification. The connection goes to `pinnedAddress` (the address the policy
 * check resolved and accepted) whatever a second DNS answer would say, so a name cannot be rebound
 * to an internal address between the check and the connection; TLS still verifies the host name.
 * No redirect is followed (a 3xx is a failed attempt), one deadline covers connect and answer, and
 * only the first 1 KiB of the answer is read, kept as text without control characters.
 */
export interface PostInput {
  url: string;
  /** Connect here instead of resolving the URL's host (undefined: allowlisted host, system resolver). */
  pinnedAddress?: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

export interface PostOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  response: string | null;
}

const RESPONSE_KEPT_BYTES = 1024;

export function postNotification(input: PostInput): Promise<PostOutcome> {
  const url = new URL(input.url);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let isSettled = false;
    const settle = (outcome: PostOutcome) => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(deadline);
      request.destroy();
      resolve(outcome);
    };
    const request = send(url, {
      method: 'POST',
      headers: { ...input.headers, 'content-length': String(Buffer.byteLength(input.body)) },
      agent: false,
      ...(input.pinnedAddress ? { lookup: pinnedLookup(input.pinnedAddress) } : {}),
    });
    const deadline = setTimeout(
      () => settle(failure(null, `no answer within ${input.timeoutMs} ms`)),
      input.timeoutMs,
    );
    request.on('error', (error) => settle(failure(null, error.message)));
    request.on('response', (response) => {
      readStart(response)
        .then((text) => {
          const code = response.statusCode ?? 0;
          if (code >= 200 && code < 300) settle({ ok: true, statusCode: code, error: null, response: text });
          else if (code >= 300 && code < 400)
            settle(failure(code, `the receiver answered ${code}; redirects are not followed`, text));
          else settle(failure(code, `the receiver answered ${code}`, text));
        })
        .catch((error: unknown) => settle(failure(response.statusCode ?? null, String(error))));
    });
    request.end(input.body);
  });
}

function failure(statusCode: number | null, error: string, response: string | null = null): PostOutcome {
  return { ok: false, statusCode, error, response };
}

/** The first RESPONSE_KEPT_BYTES of the body, then the connection is dropped (never read in full). */
function readStart(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => resolve(printable(Buffer.concat(chunks).subarray(0, RESPONSE_KEPT_BYTES)));
    response.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_KEPT_BYTES) {
        response.destroy();
        done();
      }
    });
    response.on('end', done);
    response.on('error', reject);
  });
}

/** Text a user can read safely in the delivery log: control and format characters become spaces. */
function printable(bytes: Buffer): string {
  return bytes
    .toString('utf8')
    .replace(/[\p{Cc}\p{Cf}]/gu, ' ')
    .trim();
}

function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address);
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}
