import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Iptables } from '../adapters/iptables.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../testing/test-env.js';
import { createEgressPolicy, egressRuleset, egressRuleset6, parseIpv4Cidrs } from './egress-policy.js';
import { publishedPortsRuleset } from './published-ports.js';

describe('EGRESS_DENY_CIDRS', () => {
  it('accepts IPv4 addresses and ranges', () => {
    expect(parseIpv4Cidrs(' 10.0.0.0/8, 192.168.1.7 ,,172.16.0.0/12', 'EGRESS_DENY_CIDRS')).toEqual([
      '10.0.0.0/8',
      '192.168.1.7',
      '172.16.0.0/12',
    ]);
  });

  it.each(['fd00::/8', '10.0.0.0/33', '10.0.0.0/8/1', 'intranet', '10.0.0/8', '10.0.0.0/-1', '1.2.3.4/x'])(
    'refuses %s, naming the variable',
    (value) => {
      expect(() => parseIpv4Cidrs(value, 'EGRESS_DENY_CIDRS')).toThrow(/EGRESS_DENY_CIDRS/);
    },
  );
});

describe('the rule set', () => {
  const restoreTest = (binary: string, input: string) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(binary, ['-w', '--noflush', '--test'], (error, _out, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stderr }),
      );
      child.stdin?.end(input);
    });

  it('is accepted by the real iptables-restore and ip6tables-restore (parsed, not committed)', async () => {
    const input = egressRuleset(['10.0.0.0/8', '192.0.2.1']);
    expect(await restoreTest('iptables-restore', input)).toEqual({ code: 0, stderr: '' });
    expect(await restoreTest('ip6tables-restore', egressRuleset6())).toEqual({ code: 0, stderr: '' });
    expect(input).toContain('-A HOSTCTL-EGRESS -d 10.0.0.0/8 -j REJECT');
    // Replies first: Caddy → service and health probes must keep working.
    expect(input.indexOf('RELATED,ESTABLISHED')).toBeLessThan(input.indexOf('-d 169.254.0.0/16'));
  });

  it('under Swarm denies every member’s address and the swarm’s ports, accepted by the real iptables-restore', async () => {
    const input = egressRuleset(['192.0.2.0/24'], ['10.0.0.10', '10.0.0.11']);
    expect(await restoreTest('iptables-restore', input)).toEqual({ code: 0, stderr: '' });
    for (const rule of [
      '-p tcp --dport 2377 -j REJECT',
      '-p tcp --dport 7946 -j REJECT',
      '-p udp --dport 7946 -j REJECT',
      '-p udp --dport 4789 -j REJECT',
      '-d 10.0.0.10 -j REJECT',
      '-d 10.0.0.11 -j REJECT',
    ])
      expect(input).toContain(`-A HOSTCTL-EGRESS ${rule}`);
    // Replies first: a task's own connections' answers, Caddy → task.
    expect(input.indexOf('RELATED,ESTABLISHED')).toBeLessThan(input.indexOf('--dport 4789'));
    // Without Swarm, none of it: tenant containers of the single engine keep those ports outside.
    expect(egressRuleset([])).not.toContain('--dport');
  });

  it('closing published task ports to all but the proxy is accepted too, replies and the proxy first', async () => {
    const input = publishedPortsRuleset(['10.0.0.5', '192.0.2.0/24']);
    expect(await restoreTest('iptables-restore', input)).toEqual({ code: 0, stderr: '' });
    expect(input.indexOf('RELATED,ESTABLISHED')).toBeLessThan(input.indexOf('-s 10.0.0.5 -j RETURN'));
    expect(input.indexOf('-s 192.0.2.0/24 -j RETURN')).toBeLessThan(input.indexOf('--ctstate DNAT -j DROP'));
  });

  it('is not touched with EGRESS_POLICY=off', async () => {
    const untouchable: Iptables = {
      check: () => Promise.reject(new Error('called')),
      run: () => Promise.reject(new Error('called')),
      restore: () => Promise.reject(new Error('called')),
    };
    await createEgressPolicy({ iptables: untouchable, mode: 'off', denyCidrs: '' }).ensure();
  });
});

describe('a worker without CAP_NET_ADMIN', () => {
  it('refuses to start in enforce mode and says why', async () => {
    const cwd = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    const env = {
      ...process.env,
      DATABASE_URL: TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: `test-worker-egress-cap-${process.pid}`,
      WORKER_HEALTH_PORT: '0',
      LOG_LEVEL: 'silent',
      EGRESS_POLICY: 'enforce',
    };
    // Root, but with CAP_NET_ADMIN dropped from the bounding set: what a container without
    // `cap_add: [NET_ADMIN]` gets.
    const child = spawn(
      'setpriv',
      [
        '--bounding-set=-net_admin',
        '--inh-caps=-net_admin',
        '--',
        process.execPath,
        '--import',
        'tsx',
        'src/main.ts',
      ],
      { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('EGRESS_POLICY=enforce: cannot install the egress firewall');
    expect(stderr).toContain('CAP_NET_ADMIN');
  }, 60_000);
});
