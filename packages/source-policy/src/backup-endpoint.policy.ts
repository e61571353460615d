import { checkDialedEndpoint, type DialedEndpoint } from './dialed-endpoint.js';
import type { GitUrlOptions } from './git-url.policy.js';
import { refuse, type PolicyResult } from './policy-result.js';

/**
 * The endpoint of a customer's own backup bucket (docs/backups.md#a-customers-own-target). The
 * worker dials it for the backup container (the S3 relay), so a tenant's endpoint gets the SSRF
 * guard of notification URLs with a list of its own (BACKUP_TARGET_ALLOWED_HOSTS): loopback,
 * private, link-local and single-label hosts are refused unless listed, a control-plane endpoint
 * always. Only a scheme, a host and a port: restic appends the bucket and the key itself. IPv6
 * literals are refused (the relay's in-container end listens on 127.0.0.1 under the endpoint's name).
 */
export const BACKUP_TARGET_ALLOWLIST = 'BACKUP_TARGET_ALLOWED_HOSTS';

export type BackupEndpoint = DialedEndpoint;

export function checkBackupEndpoint(
  raw: string,
  options: GitUrlOptions,
): PolicyResult<{ endpoint: BackupEndpoint }> {
  if (raw.length === 0) return refuse('is empty');
  if (raw.length > 300) return refuse('is longer than 300 characters');
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
  if (url.username !== '' || url.password !== '' || raw.includes('@'))
    return refuse('must not contain credentials (user or password before "@")');
  if (!/^https?:\/\/[^/?#]+\/?$/i.test(raw))
    return refuse('must name only a scheme, a host and a port (no path, query or fragment)');
  if (!raw.toLowerCase().startsWith(`${scheme}://${url.hostname}`))
    return refuse('has a host that is not written in its canonical form');
  if (url.hostname.startsWith('[')) return refuse('is an IPv6 literal, which is not supported');
  return checkDialedEndpoint(url, scheme, BACKUP_TARGET_ALLOWLIST, options);
}
