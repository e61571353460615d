import { validationError } from '@hostctl/domain';

export const REDIRECT_MAX_LENGTH = 2048;

/**
 * Where a browser may be sent after login: only a path on our own origin. `//evil`, `/\evil`,
 * absolute URLs and anything with control characters or whitespace (which browsers strip, turning
 * `/\t/evil` into `//evil`) are refused, and the result must still resolve to PUBLIC_URL's origin.
 */
export function checkRedirectTarget(raw: string | undefined, publicUrl: string): string {
  const target = raw ?? '/';
  const refuse = (why: string) => validationError('/querystring/redirect', why);
  if (target.length > REDIRECT_MAX_LENGTH) throw refuse(`must be at most ${REDIRECT_MAX_LENGTH} characters`);
  if (!target.startsWith('/')) throw refuse('must be a path on this site starting with /');
  if (target.startsWith('//') || target.includes('\\')) throw refuse('must not name another host');
  if (/[\u0000-\u0020\u007f]/.test(target)) throw refuse('must not contain whitespace or control characters');
  const origin = new URL(publicUrl).origin;
  const resolved = new URL(target, origin);
  if (resolved.origin !== origin) throw refuse('must stay on this site');
  return resolved.pathname + resolved.search + resolved.hash;
}
