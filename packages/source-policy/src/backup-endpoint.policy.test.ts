import { describe, expect, it } from 'vitest';
import { parseAllowedHosts } from './allowed-hosts.js';
import { checkBackupEndpoint } from './backup-endpoint.policy.js';
import { checkDialedEndpoint } from './dialed-endpoint.js';
import { protectedEndpoints } from './protected-endpoints.js';

// A customer's own backup endpoint (docs/backups.md#a-customers-own-target) is a tenant's input
// the worker dials. Written from what a tenant would try to reach instead of a storage service:
// the control plane, the host, the cloud's metadata service, another tenant's private network.
const open = { allowedHosts: [] };
const lab = {
  allowedHosts: parseAllowedHosts('127.0.0.1:9000,minio,10.1.2.3'),
  protectedEndpoints: protectedEndpoints(['http://127.0.0.1:40000'], [3000]),
};

describe('checkBackupEndpoint accepts', () => {
  it.each([
    ['https://s3.eu-central-1.example.com', open, 'https', 's3.eu-central-1.example.com', 443, false],
    ['https://S3.Example.COM:8443/', open, 'https', 's3.example.com', 8443, false],
    // A public address, checked as text only: nothing is dialled here.
    ['https://1.1.1.1', open, 'https', '1.1.1.1', 443, false],
    ['http://127.0.0.1:9000', lab, 'http', '127.0.0.1', 9000, true],
    ['https://minio', lab, 'https', 'minio', 443, true],
    ['https://10.1.2.3', lab, 'https', '10.1.2.3', 443, true],
  ])('%s', (raw, options, scheme, host, port, isAllowlisted) => {
    expect(checkBackupEndpoint(raw, options)).toEqual({
      ok: true,
      endpoint: { scheme, host, port, isAllowlisted },
    });
  });
});

describe('checkBackupEndpoint refuses', () => {
  it.each([
    // The shape: only a scheme, a host and a port.
    ['', open, /empty/],
    [`https://${'a'.repeat(300)}.com`, open, /longer than 300/],
    ['https://s3.example.com/bucket', open, /no path/],
    ['https://s3.example.com/?x=1', open, /no path/],
    ['https://s3.example.com#x', open, /no path/],
    ['https://s3.example.com\t', open, /whitespace/],
    ['https://s3.exämple.com', open, /non-ASCII/],
    ['ftp://s3.example.com', open, /scheme ftp/],
    ['file:///etc/passwd', open, /scheme file/],
    ['http://s3.example.com', open, /http:\/\/ is only allowed/],
    ['https://user:pw@s3.example.com', open, /credentials/],
    ['https://s3.example.com@127.0.0.1', open, /credentials/],
    // Loopback in every spelling the URL parser would turn into 127.0.0.1.
    ['https://127.0.0.1', open, /loopback/],
    ['https://127.1.2.3:9000', open, /loopback/],
    ['https://localhost', open, /localhost/],
    ['https://LOCALHOST.', open, /./],
    ['https://2130706433', open, /canonical/],
    ['https://0x7f000001', open, /canonical/],
    ['https://0x7f.1', open, /canonical/],
    ['https://0177.0.0.1', open, /canonical/],
    ['https://127.000.000.001', open, /canonical/],
    // IPv6, mapped IPv4 included: refused before any range check.
    ['https://[::1]', open, /IPv6 literal/],
    // The parser rewrites it to [::ffff:7f00:1]: not the form written, refused before any range check.
    ['https://[::ffff:127.0.0.1]', open, /canonical|IPv6 literal/],
    ['https://[::ffff:7f00:1]', open, /IPv6 literal/],
    ['https://[fd00::1]:9000', open, /IPv6 literal/],
    // The metadata service and private networks.
    ['https://169.254.169.254', open, /link-local|metadata/],
    ['https://169.254.169.254:80', open, /link-local|metadata/],
    ['https://10.0.0.5', open, /private/],
    ['https://172.16.0.1', open, /private/],
    ['https://192.168.1.1', open, /private/],
    ['https://100.64.0.1', open, /./],
    ['https://0.0.0.0', open, /./],
    ['https://224.0.0.1', open, /./],
    ['https://255.255.255.255', open, /./],
    ['https://203.0.113.7', open, /reserved/],
    // Names that only mean something inside: single labels and internal suffixes.
    ['https://minio', open, /single-label/],
    ['https://metadata', open, /single-label/],
  ])('%s', (raw, options, reason) => {
    const verdict = checkBackupEndpoint(raw, options);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toMatch(reason);
  });

  it('refuses a control-plane port even when its host is allowlisted', () => {
    const allowAll = {
      allowedHosts: parseAllowedHosts('127.0.0.1:1-65535'),
      protectedEndpoints: protectedEndpoints(['http://127.0.0.1:40000'], [3000]),
    };
    for (const raw of ['http://127.0.0.1:40000', 'http://127.0.0.1:3000', 'https://127.0.0.1:40000'])
      expect(checkBackupEndpoint(raw, allowAll)).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/control-plane endpoint/),
      });
    expect(checkBackupEndpoint('http://127.0.0.1:9000', allowAll)).toMatchObject({ ok: true });
  });

  it('admits an allowlisted host only on its listed port', () => {
    expect(checkBackupEndpoint('http://127.0.0.1:9001', lab)).toMatchObject({ ok: false });
    expect(checkBackupEndpoint('https://127.0.0.1:9001', lab)).toMatchObject({ ok: false });
  });
});

describe('checkDialedEndpoint (the worker checks again what it is about to dial)', () => {
  const dial = (raw: string, options: Parameters<typeof checkDialedEndpoint>[3] = open) => {
    const url = new URL(raw);
    return checkDialedEndpoint(url, url.protocol === 'http:' ? 'http' : 'https', 'THE_ALLOWLIST', options);
  };

  it('takes the default port of the scheme and names the allowlist setting in its refusals', () => {
    expect(dial('https://s3.example.com')).toMatchObject({ ok: true, endpoint: { port: 443 } });
    expect(dial('http://s3.example.com')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('THE_ALLOWLIST'),
    });
    expect(dial('http://127.0.0.1:9000', lab)).toMatchObject({ ok: true, endpoint: { port: 9000 } });
  });

  it.each([
    'https://127.0.0.1',
    'https://169.254.169.254',
    'https://10.0.0.5',
    'https://192.168.0.10:9000',
    'https://minio',
    // The WHATWG parser normalises these to 127.0.0.1 before the checker sees them: still refused.
    'https://2130706433',
    'https://0x7f.1',
    'https://[::ffff:127.0.0.1]',
    'https://[::1]',
  ])('refuses %s', (raw) => {
    expect(dial(raw).ok).toBe(false);
  });
});
