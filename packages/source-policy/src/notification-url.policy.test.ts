import { describe, expect, it } from 'vitest';
import { parseAllowedHosts } from './allowed-hosts.js';
import { checkNotificationUrl } from './notification-url.policy.js';
import { protectedEndpoints } from './protected-endpoints.js';

const open = { allowedHosts: [] };
const lab = {
  allowedHosts: parseAllowedHosts('127.0.0.1:32768-60999,hooks.internal'),
  protectedEndpoints: protectedEndpoints(['http://127.0.0.1:40000'], [3000]),
};

describe('checkNotificationUrl accepts', () => {
  it.each([
    ['https://hooks.example.com/hostctl', open, 'https', 'hooks.example.com', 443, false],
    ['https://HOOKS.example.com:8443/x?token=abc', open, 'https', 'hooks.example.com', 8443, false],
    ['https://[2606:4700::1111]/x', open, 'https', '2606:4700::1111', 443, false],
    ['http://127.0.0.1:45000/receiver', lab, 'http', '127.0.0.1', 45000, true],
    ['https://hooks.internal/x', lab, 'https', 'hooks.internal', 443, true],
  ])('%s', (url, options, scheme, host, port, isAllowlisted) => {
    expect(checkNotificationUrl(url, options)).toEqual({
      ok: true,
      target: { scheme, host, port, isAllowlisted },
    });
  });
});

describe('checkNotificationUrl refuses', () => {
  it.each([
    ['', open, /empty/],
    [`https://a.example.com/${'x'.repeat(2048)}`, open, /longer than/],
    ['https://a.example.com/a b', open, /whitespace/],
    ['ftp://a.example.com/x', open, /scheme ftp/],
    ['file:///etc/passwd', open, /scheme file/],
    ['http://hooks.example.com/x', open, /http:\/\/ is only allowed/],
    ['https://user:pw@hooks.example.com/x', open, /credentials/],
    ['https://hooks.example.com/x#frag', open, /fragment/],
    ['https://127.0.0.1/x', open, /loopback/],
    ['https://127.0.0.1:45000/x', open, /loopback/],
    ['https://0x7f.1/x', open, /canonical/],
    ['https://2130706433/x', open, /canonical/],
    ['https://169.254.169.254/latest/meta-data', open, /link-local|private|not public/],
    ['https://10.1.2.3/x', open, /private/],
    ['https://[::1]/x', open, /loopback/],
    ['https://localhost/x', open, /localhost/],
    ['https://intranet/x', open, /fully qualified/],
    ['http://127.0.0.1:3000/x', lab, /control-plane/],
    ['http://127.0.0.1:40000/x', lab, /control-plane/],
    ['http://127.0.0.1:8080/x', lab, /http:\/\/ is only allowed/],
    ['http://hooks.internal:8443/x', lab, /http:\/\/ is only allowed/],
  ])('%s', (url, options, reason) => {
    const result = checkNotificationUrl(url, options);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });
});
