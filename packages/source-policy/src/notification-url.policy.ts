import { checkDialedEndpoint, type DialedEndpoint } from './dialed-endpoint.js';
import type { GitUrlOptions } from './git-url.policy.js';
import { refuse, type PolicyResult } from './policy-result.js';

/**
 * Notification target URLs (docs/notifications.md#target-urls) pass the host policy of git URLs
 * with an allowlist of their own (NOTIFICATION_ALLOWED_HOSTS, host and port; empty by default): the
 * refusal of loopback, private, link-local (cloud metadata) and single-label hosts unless listed,
 * and never a control-plane endpoint. Not the git list: a git server the worker may clone from
 * (seen: an internal service on an allowlisted loopback port) is not a target a tenant may POST to.
 * Checked without network access at create/update time; the worker checks again and resolves the
 * host right before each attempt (resolveAndCheckHost), then connects to the address it checked.
 *  - https://, or http:// for allowlisted hosts only;
 *  - no credentials, no fragment; a query is allowed (many receivers put their token there);
 *  - the host exactly as written: a URL parser turns `0x7f.1` or `%3127.0.0.1` into 127.0.0.1,
 *    so a host that the parser rewrote is refused rather than checked in its rewritten form.
 */
export const MAX_NOTIFICATION_URL_LENGTH = 2048;

/** The variable an operator sets to open private or loopback receivers. */
export const NOTIFICATION_ALLOWLIST = 'NOTIFICATION_ALLOWED_HOSTS';

export type NotificationTarget = DialedEndpoint;

export function checkNotificationUrl(
  raw: string,
  options: GitUrlOptions,
): PolicyResult<{ target: NotificationTarget }> {
  if (typeof raw !== 'string' || raw.length === 0) return refuse('is empty');
  if (raw.length > MAX_NOTIFICATION_URL_LENGTH)
    return refuse(`is longer than ${MAX_NOTIFICATION_URL_LENGTH} characters`);
  if (/[^\x21-\x7e]/.test(raw)) return refuse('contains whitespace, control or non-ASCII characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('is not a valid URL');
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== 'https' && scheme !== 'http')
    return refuse(`scheme ${scheme}:// is not allowed; use https://`);
  if (url.username !== '' || url.password !== '' || /^[a-z]+:\/\/[^/?#]*@/i.test(raw))
    return refuse('must not contain credentials (user or password before "@")');
  if (raw.includes('#')) return refuse('must not contain a fragment ("#")');
  if (!raw.toLowerCase().startsWith(`${scheme}://${url.hostname}`))
    return refuse('has a host that is not written in its canonical form');
  const checked = checkDialedEndpoint(url, scheme, NOTIFICATION_ALLOWLIST, options);
  return checked.ok ? { ok: true, target: checked.endpoint } : checked;
}
