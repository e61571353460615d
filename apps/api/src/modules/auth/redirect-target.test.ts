import { describe, expect, it } from 'vitest';
import { checkRedirectTarget, redirectLocation } from './redirect-target.js';

const PUBLIC_URL = 'https://panel.example.test';

/** What a browser does with a Location header: resolve it against the URL that answered. */
const browserResolves = (location: string) =>
  new URL(location, `${PUBLIC_URL}/api/auth/callback?code=x`).origin;

const HOSTILE = [
  '/..//evil.example/x',
  '/.//evil.example',
  '/%2f%2fevil.example',
  '/%5c%5cevil.example',
  '//evil.example',
  '\\\\evil.example',
  '/\\evil.example',
  '/\t/evil.example',
  'http:evil.example',
  'https://evil.example',
  'https://panel.example.test:8443/',
  'http://panel.example.test/',
  'https://panel.example.test@evil.example/',
  'https://evil.example#@panel.example.test',
  '/\u2028/evil.example',
];

describe('redirect targets (pure)', () => {
  it.each(HOSTILE)('refuses %j', (target) => {
    expect(() => checkRedirectTarget(target, PUBLIC_URL)).toThrow();
  });

  it.each(HOSTILE)('the callback Location for a stored %j still resolves to our origin', (target) => {
    const location = redirectLocation(target, PUBLIC_URL);
    expect(browserResolves(location)).toBe(PUBLIC_URL);
    expect(location).toBe(`${PUBLIC_URL}/`);
  });

  it('keeps a same-origin target, made absolute', () => {
    expect(redirectLocation('/services/a?x=1#b', PUBLIC_URL)).toBe(`${PUBLIC_URL}/services/a?x=1#b`);
    expect(checkRedirectTarget('/a/../s', PUBLIC_URL)).toBe('/s');
  });
});
