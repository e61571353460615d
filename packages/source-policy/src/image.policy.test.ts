import { describe, expect, it } from 'vitest';
import { AllowlistError, parseAllowedHosts } from './allowed-hosts.js';
import { parseImageReference } from './image-reference.js';
import { checkImage, isPlatformImage, type ImagePolicy } from './image.policy.js';
import { protectedEndpoints } from './protected-endpoints.js';

// Written from what an attacker would put in `image:`; every refusal is decided without network.
const policy: ImagePolicy = {
  platformImages: ['local/*', 'nginx:1.27', 'redis'],
  registryAllowedHosts: parseAllowedHosts('127.0.0.1:5000,registry.corp.example', 'REGISTRY_ALLOWED_HOSTS'),
  protectedEndpoints: protectedEndpoints([
    'postgresql://postgres@127.0.0.1:5432/db',
    'http://127.0.0.1:2019',
  ]),
};
const hex64 = 'a'.repeat(64);

describe('parseImageReference follows Docker reference grammar', () => {
  it.each([
    ['nginx', { path: 'nginx' }],
    ['nginx:1.27', { path: 'nginx', tag: '1.27' }],
    ['library/nginx:1.27-alpine', { path: 'library/nginx', tag: '1.27-alpine' }],
    [
      '127.0.0.1:5000/busybox:1',
      { domain: '127.0.0.1:5000', host: '127.0.0.1', port: 5000, path: 'busybox' },
    ],
    [
      'registry.example.com/team/app__x/y-z.q:V_1',
      { domain: 'registry.example.com', path: 'team/app__x/y-z.q' },
    ],
    ['localhost/app', { domain: 'localhost', host: 'localhost', path: 'app' }],
    ['[::1]:5000/app:1', { host: '::1', port: 5000, path: 'app' }],
    [`app@sha256:${hex64}`, { path: 'app', digest: `sha256:${hex64}` }],
    [`r.example.com/app:1@sha256:${hex64}`, { tag: '1', digest: `sha256:${hex64}` }],
    ['cafe:1', { path: 'cafe', tag: '1' }],
  ])('accepts %s', (text, expected) => {
    const result = parseImageReference(text);
    expect(result).toMatchObject({ ok: true, image: { text, ...expected } });
  });

  it.each([
    ['x/../../containers/foo', /path component/],
    ['x/%2e%2e/containers/foo', /path component/],
    ['x/..', /path component/],
    ['./x', /registry host|path component/],
    ['Nginx:1', /path component/],
    ['team/App', /path component/],
    ['nginx 1', /whitespace/],
    [' nginx', /whitespace/],
    ['nginx\n', /whitespace/],
    ['nginx?x=1', /path component|tag/],
    ['nginx:1?x=1', /tag/],
    ['nginx#frag', /path component/],
    ['nginx:1#x', /tag/],
    ['/nginx', /empty path/],
    ['nginx/', /empty path/],
    ['a//b', /empty path/],
    ['nginx:', /tag/],
    ['nginx:-1', /tag/],
    [`nginx:${'a'.repeat(129)}`, /tag/],
    [`${'a'.repeat(256)}:1`, /longer than 255/],
    ['x'.repeat(600), /longer than 512/],
    ['nginx@sha256:abc', /digest/],
    ['nginx@md5:' + 'a'.repeat(32), /digest/],
    ['479b', /image id prefix/],
    ['479b0c5bd0e2', /image id prefix/],
    [hex64, /image id/],
    [`sha256:${hex64}`, /image id/],
    ['sha256:479b', /image id/],
    ['SHA256:479b', /image id/],
    ['', /empty/],
    ['-rm', /path component/],
    ['ex ample.com/x', /whitespace/],
    ['bad_host.example:5000/x', /registry host/],
    ['example.com:0/x', /port/],
    ['example.com:99999/x', /port/],
    ['[zz::1]:5000/x', /IPv6/],
    ['ré.example/x', /whitespace|non-ASCII/],
  ])('refuses %s', (text, reason) => {
    const result = parseImageReference(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });
});

describe('checkImage', () => {
  it.each([
    'local/busybox:1',
    'local/anything',
    'nginx:1.27',
    'redis:7',
    '127.0.0.1:5000/busybox:1',
    'registry.corp.example/app:2',
    'registry.corp.example:443/app:2',
    'ghcr.io/org/app:1',
    'docker.io/library/nginx:1.27',
  ])('allows %s', (text) => {
    expect(checkImage(text, policy).ok).toBe(true);
  });

  it('resolves the host only for registries nobody vouched for', () => {
    expect(checkImage('ghcr.io/org/app:1', policy)).toMatchObject({ ok: true, mustResolveHost: true });
    expect(checkImage('127.0.0.1:5000/busybox:1', policy)).toMatchObject({ mustResolveHost: false });
    expect(checkImage('local/busybox:1', policy)).toMatchObject({ mustResolveHost: false });
  });

  it.each([
    ['busybox:1', /not a platform image/],
    ['nginx:1.26', /not a platform image/],
    ['local/sub/x:1', /not a platform image/],
    ['hostctl/0123456789ab:deadbeef', /reserved/],
    ['hostctl/0123456789ab-web:deadbeef', /reserved/],
    ['127.0.0.1:5000/hostctl/0123456789ab:deadbeef', /reserved/],
    ['docker.io/hostctl/x:1', /reserved/],
    ['127.0.0.1:2019/x/y:1', /control-plane endpoint/],
    ['localhost:8081/x:1', /control-plane endpoint/],
    ['[::1]:6379/x:1', /control-plane endpoint/],
    ['127.0.0.2:5432/x:1', /control-plane endpoint/],
    ['0.0.0.0:2019/x:1', /control-plane endpoint/],
    ['127.0.0.1:5001/x:1', /loopback/],
    ['127.0.0.1/x:1', /loopback/],
    ['registry.corp.example:5000/x:1', /ok|/],
    ['169.254.169.254/latest:1', /link-local/],
    ['169.254.169.254:80/latest:1', /link-local/],
    ['10.0.0.1:5000/x:1', /private/],
    ['[fd00::1]:5000/x:1', /unique-local/],
    ['127.1/x:1', /canonical/],
    ['127.1:5000/x:1', /canonical/],
    ['0x7f.0.0.1:5000/x:1', /canonical/],
    ['2130706433:5000/x:1', /canonical/],
    ['0.0.0.0:5000/x:1', /unspecified/],
    ['localhost/x:1', /localhost/],
    ['registry.localhost:5000/x:1', /localhost/],
    ['2130706433/x:1', /not a platform image/],
    ['479b', /image id prefix/],
  ])('refuses %s', (text, reason) => {
    const result = checkImage(text, policy);
    if (text === 'registry.corp.example:5000/x:1') {
      // A bare allowlist entry opens 443 only; 5000 is then an ordinary public host.
      expect(result).toMatchObject({ ok: true, mustResolveHost: true });
      return;
    }
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it('lets a service name only the images it built itself', () => {
    const own = { ownBuildPrefixes: ['hostctl/0123456789ab', 'hostctl/0123456789ab-web'] };
    expect(checkImage('hostctl/0123456789ab:c0ffee', policy, own).ok).toBe(true);
    expect(checkImage('hostctl/0123456789ab-web:c0ffee', policy, own).ok).toBe(true);
    expect(checkImage('hostctl/ffffffffffff:c0ffee', policy, own).ok).toBe(false);
    expect(checkImage('127.0.0.1:5000/hostctl/0123456789ab:c0ffee', policy, own).ok).toBe(false);
  });
});

describe('allowlist entries', () => {
  it('parses host, host:port, ranges and IPv6', () => {
    expect(parseAllowedHosts(' Reg.Example. , 127.0.0.1:5000,127.0.0.1:32768-60999,[::1]:5000,::1')).toEqual([
      { host: 'reg.example' },
      { host: '127.0.0.1', ports: { from: 5000, to: 5000 } },
      { host: '127.0.0.1', ports: { from: 32768, to: 60999 } },
      { host: '::1', ports: { from: 5000, to: 5000 } },
      { host: '::1' },
    ]);
  });

  it.each(['127.0.0.1:0', '127.0.0.1:70000', 'h:2-1', 'h:x', 'h:1-', 'a b', '-h', 'h:1:2'])(
    'refuses %s as a configuration error naming the variable',
    (entry) => {
      expect(() => parseAllowedHosts(entry, 'REGISTRY_ALLOWED_HOSTS')).toThrow(AllowlistError);
      expect(() => parseAllowedHosts(entry, 'REGISTRY_ALLOWED_HOSTS')).toThrow(/REGISTRY_ALLOWED_HOSTS/);
    },
  );
});

describe('isPlatformImage', () => {
  it('matches exact references, repositories at any tag and globs that stay within one path level', () => {
    expect(isPlatformImage('redis:7', ['redis'])).toBe(true);
    expect(isPlatformImage('redis', ['redis'])).toBe(true);
    expect(isPlatformImage('redisx:7', ['redis'])).toBe(false);
    expect(isPlatformImage('nginx:1.27', ['nginx:1.27'])).toBe(true);
    expect(isPlatformImage('nginx:1.27.1', ['nginx:1.27'])).toBe(false);
    expect(isPlatformImage('local/busybox:1', ['local/*'])).toBe(true);
    expect(isPlatformImage('local/a/b:1', ['local/*'])).toBe(false);
    expect(isPlatformImage('localx/busybox:1', ['local/*'])).toBe(false);
  });
});
