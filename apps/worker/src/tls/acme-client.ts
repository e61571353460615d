import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { certificateRequest } from './csr.js';
import type { AcmeHttp, AcmeResponse } from './acme-http.js';
import { dnsChallengeValue, keyAuthorization, signRequest, type AccountKey } from './jws.js';

/** Where the client writes and removes the dns-01 TXT records (the platform's own DNS). */
export interface ChallengeDns {
  /** Adds `value` to the TXT records at `name` (FQDN, no trailing dot). */
  add(name: string, value: string): Promise<void>;
  /** Removes exactly `value` from them; other values (another order's) stay. */
  remove(name: string, value: string): Promise<void>;
}

/**
 * Where the client answers http-01 challenges (RFC 8555 §8.3): the proxy that serves port 80 for
 * the name answers `/.well-known/acme-challenge/<token>` with the key authorization.
 */
export interface ChallengeHttp {
  add(domain: string, token: string, keyAuthorization: string): Promise<void>;
  /** Withdraws exactly that token's answer. */
  remove(domain: string, token: string): Promise<void>;
}

/** dns-01 for the wildcard (the only way to one); http-01 for a custom domain the platform routes. */
export type ChallengeType = 'dns-01' | 'http-01';

export interface IssuedCertificate {
  /** The leaf first, then the chain, as the CA sent it. */
  certificatePem: string;
  privateKeyPem: string;
}

interface Directory {
  newNonce: string;
  newAccount: string;
  newOrder: string;
}

interface Order {
  status: string;
  authorizations: string[];
  finalize: string;
  certificate?: string;
  error?: unknown;
}

interface Authorization {
  status: string;
  identifier: { type: string; value: string };
  challenges: { type: string; url: string; token: string; status: string; error?: unknown }[];
}

export interface AcmeClientOptions {
  directoryUrl: string;
  http: AcmeHttp;
  dns: ChallengeDns;
  /** Who answers http-01 (Caddy); absent: the client orders through dns-01 only. */
  challenges?: ChallengeHttp;
  /** Between polls of an authorization or an order. */
  pollMs?: number;
  /** Polls before giving up on one authorization or order. */
  maxPolls?: number;
}

const BAD_NONCE = 'urn:ietf:params:acme:error:badNonce';
/**
 * A CA may refuse a good nonce (pebble refuses 5% on purpose): with one retry, two refusals in a
 * row failed about one order in forty; three tries make it negligible.
 */
const BAD_NONCE_TRIES = 3;

/** A problem from the CA, kept as the CA worded it: it becomes the certificate's last error. */
class AcmeError extends Error {}

/**
 * A small RFC 8555 client for what the platform needs: one account, one order of DNS names
 * validated through dns-01 on the platform's own DNS or through http-01 on its proxy, an ECDSA
 * P-256 certificate key. Every
 * request is a signed POST (POST-as-GET for reads, §6.3); a badNonce answer is retried (up to
 * BAD_NONCE_TRIES in all) with the fresh nonce it carries (§6.5). The TXT records or challenge
 * answers an order wrote are removed whatever happens.
 */
export function createAcmeClient(options: AcmeClientOptions) {
  const pollMs = options.pollMs ?? 1000;
  const maxPolls = options.maxPolls ?? 60;
  let directory: Directory | undefined;
  let nonce: string | undefined;

  async function dir(): Promise<Directory> {
    if (directory) return directory;
    const response = await options.http('GET', options.directoryUrl);
    if (response.status !== 200) throw new AcmeError(`ACME directory answered ${response.status}`);
    directory = JSON.parse(response.body) as Directory;
    return directory;
  }

  async function freshNonce(): Promise<string> {
    if (nonce) {
      const value = nonce;
      nonce = undefined;
      return value;
    }
    const response = await options.http('HEAD', (await dir()).newNonce);
    const value = header(response, 'replay-nonce');
    if (!value) throw new AcmeError('the CA gave no nonce');
    return value;
  }

  async function post(
    key: AccountKey,
    url: string,
    payload: object | undefined,
    kid?: string,
    attempt = 1,
  ): Promise<AcmeResponse> {
    const body = signRequest(key, { url, nonce: await freshNonce(), ...(kid ? { kid } : {}) }, payload);
    const response = await options.http('POST', url, body);
    nonce = header(response, 'replay-nonce') ?? undefined;
    if (response.status >= 400) {
      const problem = parseProblem(response);
      if (problem.type === BAD_NONCE && attempt < BAD_NONCE_TRIES)
        return post(key, url, payload, kid, attempt + 1);
      throw new AcmeError(
        `${problem.type ?? 'error'} ${response.status}: ${problem.detail ?? response.body.slice(0, 200)}`,
      );
    }
    return response;
  }

  async function account(key: AccountKey): Promise<string> {
    const response = await post(key, (await dir()).newAccount, { termsOfServiceAgreed: true });
    const kid = header(response, 'location');
    if (!kid) throw new AcmeError('the CA gave no account URL');
    return kid;
  }

  async function poll<T extends { status: string }>(
    key: AccountKey,
    kid: string,
    url: string,
    done: (value: T) => boolean,
  ): Promise<T> {
    for (let attempt = 0; attempt < maxPolls; attempt += 1) {
      const value = JSON.parse((await post(key, url, undefined, kid)).body) as T;
      if (done(value) || value.status === 'invalid') return value;
      await sleep(pollMs);
    }
    throw new AcmeError(`${url} did not settle after ${maxPolls} polls`);
  }

  /** Publishes the answer to one challenge; resolves to what withdraws it. */
  async function publish(
    type: ChallengeType,
    domain: string,
    token: string,
    key: AccountKey,
  ): Promise<() => Promise<void>> {
    if (type === 'http-01') {
      const responder = options.challenges;
      if (!responder) throw new AcmeError('http-01 needs a proxy to answer the challenge');
      await responder.add(domain, token, keyAuthorization(token, key));
      return () => responder.remove(domain, token);
    }
    const name = `_acme-challenge.${domain.replace(/^\*\./, '')}`;
    const value = dnsChallengeValue(token, key);
    await options.dns.add(name, value);
    return () => options.dns.remove(name, value);
  }

  async function authorize(key: AccountKey, kid: string, url: string, type: ChallengeType): Promise<void> {
    const authz = JSON.parse((await post(key, url, undefined, kid)).body) as Authorization;
    if (authz.status === 'valid') return;
    const challenge = authz.challenges.find((c) => c.type === type);
    if (!challenge) throw new AcmeError(`no ${type} challenge for ${authz.identifier.value}`);
    const withdraw = await publish(type, authz.identifier.value, challenge.token, key);
    try {
      await post(key, challenge.url, {}, kid);
      const settled = await poll<Authorization>(key, kid, url, (a) => a.status === 'valid');
      if (settled.status !== 'valid') {
        const failed = settled.challenges.find((c) => c.type === type);
        throw new AcmeError(`${authz.identifier.value}: ${describe(failed?.error) ?? settled.status}`);
      }
    } finally {
      await withdraw();
    }
  }

  return {
    /** Orders a certificate for `names` (the first is the subject) and returns it with its key. */
    async issue(
      key: AccountKey,
      names: readonly string[],
      type: ChallengeType = 'dns-01',
    ): Promise<IssuedCertificate> {
      const kid = await account(key);
      const created = await post(
        key,
        (await dir()).newOrder,
        {
          identifiers: names.map((value) => ({ type: 'dns', value })),
        },
        kid,
      );
      const orderUrl = header(created, 'location');
      if (!orderUrl) throw new AcmeError('the CA gave no order URL');
      const order = JSON.parse(created.body) as Order;
      // One at a time: each writes and removes its own answer (a wildcard and its base share a TXT name).
      for (const url of order.authorizations) await authorize(key, kid, url, type);

      const certificateKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const csr = certificateRequest(names, certificateKey.privateKey, certificateKey.publicKey);
      await post(key, order.finalize, { csr: csr.toString('base64url') }, kid);
      const finished = await poll<Order>(key, kid, orderUrl, (o) => o.status === 'valid');
      if (finished.status !== 'valid' || !finished.certificate) {
        throw new AcmeError(`order ${finished.status}: ${describe(finished.error) ?? 'no certificate'}`);
      }
      const certificatePem = (await post(key, finished.certificate, undefined, kid)).body;
      if (!certificatePem.includes('BEGIN CERTIFICATE'))
        throw new AcmeError('the CA sent no PEM certificate');
      return {
        certificatePem,
        privateKeyPem: certificateKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      };
    },
  };
}

function header(response: AcmeResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function parseProblem(response: AcmeResponse): { type?: string; detail?: string } {
  try {
    return JSON.parse(response.body) as { type?: string; detail?: string };
  } catch {
    return {};
  }
}

function describe(problem: unknown): string | undefined {
  if (typeof problem !== 'object' || problem === null) return undefined;
  const { type, detail } = problem as { type?: string; detail?: string };
  return [type, detail].filter(Boolean).join(': ') || undefined;
}
