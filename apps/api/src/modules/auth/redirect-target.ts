import { validationError } from '@hostctl/domain';

export const REDIRECT_MAX_LENGTH = 2048;

/**
 * Whitespace and invisible characters that browsers strip or treat as separators: C0/C1 controls,
 * space, NBSP, the Unicode spaces, zero-width characters, line/paragraph separators and the BOM.
 * `/\t/evil` becomes `//evil` in a browser, so none of them is allowed anywhere.
 */
const INVISIBLE =
  /[\u0000-\u0020\u007f-\u00a0\u00ad\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff]/;

/**
 * Where a browser may be sent after login: a path on PUBLIC_URL's origin. It is resolved as a
 * browser would resolve it and the origins compared, never string prefixes alone. Returns the
 * normalised path + query + fragment; refused targets are a 400 naming `/querystring/redirect`.
 *
 * A resolved path that still starts with two slashes (`/..//evil`, `/.//evil`) or whose decoded form
 * does (`/%2f%2fevil`, `/%5cevil`) is refused: emitted as a relative Location it would name
 * another host, and an app router that decodes the path might make the same mistake.
 */
export function checkRedirectTarget(raw: string | undefined, publicUrl: string): string {
  const target = raw ?? '/';
  const refuse = (why: string) => validationError('/querystring/redirect', why);
  if (target.length > REDIRECT_MAX_LENGTH) throw refuse(`must be at most ${REDIRECT_MAX_LENGTH} characters`);
  if (INVISIBLE.test(target)) throw refuse('must not contain whitespace or control characters');
  // Browsers read `\` as `/` in http(s) URLs; no legitimate target needs one.
  if (target.includes('\\')) throw refuse('must not contain a backslash');
  // Only a path: absolute and scheme-relative URLs (`https://…`, `http:evil`, `//evil`), even of
  // our own origin, are refused, so there is no host in the target to compare at all.
  if (!target.startsWith('/') || target.startsWith('//')) {
    throw refuse('must be a path on this site starting with a single /');
  }
  const origin = new URL(publicUrl).origin;
  let resolved: URL;
  try {
    resolved = new URL(target, `${origin}/`);
  } catch {
    throw refuse('must be a path on this site');
  }
  if (resolved.origin !== origin) throw refuse('must stay on this site');
  if (resolved.username !== '' || resolved.password !== '') throw refuse('must not carry user information');
  const path = resolved.pathname;
  if (/^\/[/\\]/.test(path) || /^\/[/\\]/.test(decodeLoosely(path))) {
    throw refuse('must not name another host');
  }
  return path + resolved.search + resolved.hash;
}

/**
 * The Location the callback sends: the stored target checked again (defence in depth: a login
 * state written by an older version must not escape) and made absolute on PUBLIC_URL's origin, so
 * the browser cannot resolve it anywhere else. A target that fails the check lands on `/`.
 */
export function redirectLocation(target: string, publicUrl: string): string {
  const origin = new URL(publicUrl).origin;
  let path = '/';
  try {
    path = checkRedirectTarget(target, publicUrl);
  } catch {
    path = '/';
  }
  const location = new URL(path, `${origin}/`);
  return location.origin === origin ? location.href : `${origin}/`;
}

function decodeLoosely(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
