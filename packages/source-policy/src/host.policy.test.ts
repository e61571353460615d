import { describe, expect, it } from 'vitest';
import { resolveAndCheckHost, type Lookup } from './host.policy.js';
import { nonPublicKind } from './ip-ranges.js';

// No test here sends a packet anywhere but loopback: lookups are injected (or `localhost`, which
// the resolver answers from /etc/hosts), and nothing connects.
const answers =
  (table: Record<string, string[]>): Lookup =>
  async (host) => {
    const found = table[host];
    if (!found) throw new Error(`ENOTFOUND ${host}`);
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('resolveAndCheckHost', () => {
  const lookup = answers({
    'public.example': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'rebind.example': ['93.184.215.14', '10.0.0.7'],
    'meta.example': ['169.254.169.254'],
    'ula.example': ['fd12:3456::1'],
    'mapped.example': ['::ffff:192.168.0.1'],
    'empty.example': [],
  });

  it('accepts a host whose every address is public, returning them for pinning', async () => {
    expect(await resolveAndCheckHost('Public.Example.', false, { lookup })).toEqual({
      ok: true,
      resolved: {
        host: 'public.example',
        isAllowlisted: false,
        addresses: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
      },
    });
  });

  it.each([
    ['rebind.example', /private address \(10\.0\.0\.7\)/],
    ['meta.example', /link-local/],
    ['ula.example', /unique-local/],
    ['mapped.example', /private/],
    ['empty.example', /no addresses/],
    ['missing.example', /cannot be resolved: ENOTFOUND/],
    ['127.0.0.1', /loopback/],
    ['::1', /loopback/],
  ])('refuses %s', async (host, reason) => {
    const result = await resolveAndCheckHost(host, false, { lookup });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it('refuses localhost through the real resolver', async () => {
    const result = await resolveAndCheckHost('localhost', false);
    expect(result).toMatchObject({ ok: false, reason: expect.stringMatching(/loopback/) });
  });

  it('does not resolve allowlisted hosts at all', async () => {
    const never: Lookup = () => Promise.reject(new Error('must not be called'));
    expect(
      await resolveAndCheckHost('git.internal', true, {
        lookup: never,
      }),
    ).toEqual({
      ok: true,
      resolved: { host: 'git.internal', isAllowlisted: true, addresses: [] },
    });
  });

  it('gives up on a resolver that does not answer', async () => {
    const hang: Lookup = () => new Promise(() => {});
    const result = await resolveAndCheckHost('slow.example', false, { lookup: hang, timeoutMs: 50 });
    expect(result).toMatchObject({ ok: false, reason: expect.stringMatching(/no answer within 50 ms/) });
  });
});

describe('nonPublicKind', () => {
  it.each([
    ['8.8.8.8', null],
    ['1.1.1.1', null],
    ['2606:4700::1111', null],
    ['::ffff:8.8.8.8', null],
    ['0.0.0.0', 'unspecified'],
    ['127.0.0.53', 'loopback'],
    ['10.255.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', null],
    ['100.64.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['64:ff9b::a00:1', 'reserved'],
    ['2002:a00:1::', 'reserved'],
    ['::ffff:10.0.0.1', 'private'],
    ['not-an-ip', 'invalid'],
  ])('%s → %s', (address, kind) => {
    expect(nonPublicKind(address)).toBe(kind);
  });
});
