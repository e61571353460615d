import { describe, expect, it } from 'vitest';
import { httpsListener, routeHttps, sameHttps } from './route-https.js';

// Which names of a route redirect to HTTPS and what HSTS it sends (docs/tls.md#https-and-plain-http).
const on = httpsListener('https://ca.example/dir', '127.0.0.1:443');
const hosts = ['web.apps.localhost', 'shop.example.com', 'new.example.com'];
const service = { redirect: true, hstsMaxAge: null, certifiedDomains: ['shop.example.com'] };

describe('a route’s HTTPS behaviour', () => {
  it('redirects the apps name and the custom domains that have a certificate, nothing else', () => {
    expect(routeHttps(on, hosts, 'apps.localhost', service)).toEqual({
      redirectHosts: ['web.apps.localhost', 'shop.example.com'],
      httpsPort: 443,
      hstsMaxAge: null,
    });
  });

  it('nothing without a CA or without an HTTPS listener, whatever the service asks', () => {
    for (const listener of [httpsListener('', '127.0.0.1:443'), httpsListener('https://ca.example/dir', '')])
      expect(routeHttps(listener, hosts, 'apps.localhost', { ...service, hstsMaxAge: 600 })).toBeUndefined();
  });

  it('the opt-out without HSTS leaves the route as it always was; HSTS alone keeps no redirect', () => {
    expect(routeHttps(on, hosts, 'apps.localhost', { ...service, redirect: false })).toBeUndefined();
    expect(routeHttps(on, hosts, 'apps.localhost', { ...service, redirect: false, hstsMaxAge: 600 })).toEqual(
      {
        redirectHosts: [],
        httpsPort: 443,
        hstsMaxAge: 600,
      },
    );
  });

  it('reads the listener port for the Location', () => {
    expect(httpsListener('https://ca.example/dir', ':8443').port).toBe(8443);
  });

  it('compares host sets, HSTS and port: a domain certified since is a difference', () => {
    const current = routeHttps(on, hosts, 'apps.localhost', { ...service, certifiedDomains: [] });
    const wanted = routeHttps(on, hosts, 'apps.localhost', service);
    expect(sameHttps(current, wanted)).toBe(false);
    expect(sameHttps(wanted, { ...wanted!, redirectHosts: [...wanted!.redirectHosts].reverse() })).toBe(true);
    expect(sameHttps(wanted, { ...wanted!, hstsMaxAge: 600 })).toBe(false);
    expect(sameHttps(undefined, undefined)).toBe(true);
    expect(sameHttps(undefined, wanted)).toBe(false);
  });
});
