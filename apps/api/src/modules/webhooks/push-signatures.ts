import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Which forge sent a push delivery, and whether it knew the hook's secret (docs/webhooks.md).
 * Pure functions of the headers and the raw body bytes: the body is never parsed before its
 * signature holds.
 */
export type Provider = 'github' | 'gitlab' | 'gitea' | 'forgejo';

type Headers = Record<string, string | string[] | undefined>;

export interface DeliveryHeaders {
  provider: Provider | null;
  /** The forge's event name (`push`, `Push Hook`, `ping`, …), cut to 100 characters. */
  event: string | null;
  /** The forge's id of this delivery; a redelivery repeats it. */
  deliveryId: string | null;
}

const header = (headers: Headers, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};
const short = (value: string | undefined): string | null =>
  value === undefined || value === '' ? null : value.slice(0, 100);

/**
 * Forgejo also sends Gitea's and GitHub's header names, and Gitea GitHub's: the most specific
 * forge is recognised first, so each is verified with its own scheme.
 */
export function deliveryHeaders(headers: Headers): DeliveryHeaders {
  if (header(headers, 'x-forgejo-event') !== undefined || header(headers, 'x-forgejo-signature'))
    return {
      provider: 'forgejo',
      event: short(header(headers, 'x-forgejo-event')),
      deliveryId: short(header(headers, 'x-forgejo-delivery')),
    };
  if (header(headers, 'x-gitea-event') !== undefined || header(headers, 'x-gitea-signature'))
    return {
      provider: 'gitea',
      event: short(header(headers, 'x-gitea-event')),
      deliveryId: short(header(headers, 'x-gitea-delivery')),
    };
  if (header(headers, 'x-gitlab-event') !== undefined || header(headers, 'x-gitlab-token'))
    return {
      provider: 'gitlab',
      event: short(header(headers, 'x-gitlab-event')),
      // Idempotency-Key stays the same across GitLab's retries; the event UUID on older versions.
      deliveryId: short(header(headers, 'idempotency-key') ?? header(headers, 'x-gitlab-event-uuid')),
    };
  if (header(headers, 'x-github-event') !== undefined || header(headers, 'x-hub-signature-256'))
    return {
      provider: 'github',
      event: short(header(headers, 'x-github-event')),
      deliveryId: short(header(headers, 'x-github-delivery')),
    };
  return { provider: null, event: null, deliveryId: null };
}

const hmacHex = (secret: string, body: Buffer): string =>
  createHmac('sha256', secret).update(body).digest('hex');

/** Constant-time for equal lengths; a length difference is not a secret (the digest's is fixed). */
function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Why the signature failed, naming the header; null when it holds. */
export function signatureProblem(
  provider: Provider | null,
  headers: Headers,
  body: Buffer,
  secret: string,
): string | null {
  switch (provider) {
    case 'github': {
      const given = header(headers, 'x-hub-signature-256');
      if (!given) return 'X-Hub-Signature-256 is missing';
      return sameText(given.toLowerCase(), `sha256=${hmacHex(secret, body)}`)
        ? null
        : 'X-Hub-Signature-256 does not match the body and the hook secret';
    }
    case 'gitlab': {
      const given = header(headers, 'x-gitlab-token');
      if (!given) return 'X-Gitlab-Token is missing';
      return sameText(given, secret) ? null : 'X-Gitlab-Token is not the hook secret';
    }
    case 'gitea':
    case 'forgejo': {
      const name = provider === 'gitea' ? 'X-Gitea-Signature' : 'X-Forgejo-Signature';
      const given = header(headers, name.toLowerCase());
      if (!given) return `${name} is missing`;
      return sameText(given.toLowerCase(), hmacHex(secret, body))
        ? null
        : `${name} does not match the body and the hook secret`;
    }
    case null:
      // Same work as a real check: the answer's timing does not tell which headers are expected.
      hmacHex(secret, body);
      return 'no signature: send X-Hub-Signature-256 (GitHub), X-Gitlab-Token (GitLab), X-Gitea-Signature (Gitea) or X-Forgejo-Signature (Forgejo)';
  }
}
