import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan, PlanContainer } from '@hostctl/compose';
import { forgetCommand, parseSnapshotIds } from './restic.js';
import { retentionOf } from './retention.js';
import { openS3Relay } from './s3-relay.js';
import { parseEndpoint, relayScript } from './s3-target.js';

const defaults = {
  BACKUP_KEEP_LAST: 7,
  BACKUP_KEEP_DAILY: 14,
  BACKUP_KEEP_WEEKLY: 8,
  BACKUP_KEEP_MONTHLY: 12,
};
const container = (name: string, labels: Record<string, string>): PlanContainer => ({
  name,
  image: 'local/busybox:1',
  environment: {},
  labels,
  volumes: [],
  ports: [],
  dependsOn: [],
  restart: 'no',
  init: true,
  limits: {},
});
const plan = (...containers: PlanContainer[]): Plan => ({ containers, volumes: ['data'] });

describe('the retention policy of a plan', () => {
  it("is the operator's defaults, each overridden by a component's label", () => {
    expect(retentionOf(plan(container('web', {})), defaults)).toEqual({
      last: 7,
      daily: 14,
      weekly: 8,
      monthly: 12,
    });
    expect(
      retentionOf(
        plan(
          container('web', { 'hostctl.backup.keep-last': '2' }),
          container('db', { 'hostctl.backup.keep-daily': '0' }),
        ),
        defaults,
      ),
    ).toEqual({ last: 2, daily: 0, weekly: 8, monthly: 12 });
  });

  it('takes a rule the backup schedule sets through the API over the label and the default', () => {
    const labelled = plan(
      container('web', { 'hostctl.backup.keep-last': '2', 'hostctl.backup.keep-daily': '3' }),
    );
    const overrides = { keepLast: 30, keepDaily: null, keepWeekly: 0, keepMonthly: null };
    expect(retentionOf(labelled, defaults, overrides)).toEqual({
      last: 30,
      daily: 3,
      weekly: 0,
      monthly: 12,
    });
  });

  it.each([
    ['0', 'hostctl.backup.keep-last', 'from 1 to 9999, not "0"'],
    ['-1', 'hostctl.backup.keep-daily', 'from 0 to 9999, not "-1"'],
    ['seven', 'hostctl.backup.keep-weekly', 'from 0 to 9999, not "seven"'],
  ])('refuses %s for %s, naming the label', (value, label, message) => {
    expect(() => retentionOf(plan(container('db', { [label]: value })), defaults)).toThrow(
      `services.db.labels.${label} must be a whole number ${message}`,
    );
  });

  it('refuses two components that disagree, naming both', () => {
    expect(() =>
      retentionOf(
        plan(
          container('web', { 'hostctl.backup.keep-last': '2' }),
          container('db', { 'hostctl.backup.keep-last': '3' }),
        ),
        defaults,
      ),
    ).toThrow(
      'services.db.labels.hostctl.backup.keep-last (3) disagrees with services.web.labels.hostctl.backup.keep-last (2)',
    );
  });
});

describe('restic forget and snapshots', () => {
  it('forgets only the snapshots of one volume of one service, keeping at least the last', () => {
    const command = forgetCommand(
      { serviceId: 's-1', volume: 'data' },
      { last: 0, daily: 3, weekly: 0, monthly: 0 },
    );
    expect(command).toEqual([
      'restic',
      'forget',
      '--no-cache',
      '--group-by',
      'host',
      '--tag',
      'service:s-1,volume:data',
      '--keep-last',
      '1',
      '--keep-daily',
      '3',
    ]);
  });

  it('reads full and short ids, and nothing from output that is not a list', () => {
    const ids = parseSnapshotIds('[{"id":"9c6d33e0aa","short_id":"9c6d33e0"}]\n');
    expect(ids && [...ids]).toEqual(['9c6d33e0aa', '9c6d33e0']);
    expect(parseSnapshotIds('Fatal: wrong password')).toBeNull();
    expect(parseSnapshotIds('{"id":"x"}')).toBeNull();
  });
});

describe('the S3 endpoint', () => {
  it('takes a scheme, a host and a port, with the default port of the scheme', () => {
    expect(parseEndpoint('https://s3.example.test')).toEqual({
      protocol: 'https:',
      host: 's3.example.test',
      port: 443,
    });
    expect(parseEndpoint('http://127.0.0.1:9000/')).toEqual({
      protocol: 'http:',
      host: '127.0.0.1',
      port: 9000,
    });
  });

  it.each([
    ['', /must be an http\(s\) URL/],
    ['ftp://s3.example.test', /must be an http\(s\) URL/],
    ['https://key:secret@s3.example.test', /only a scheme, a host and a port/],
    ['https://s3.example.test/bucket', /only a scheme, a host and a port/],
    ['https://[::1]:9000', /IPv6/],
  ])('refuses %j', (value, message) => {
    expect(() => parseEndpoint(value)).toThrow(message);
  });

  it("waits for the relay's listener on the endpoint's port before running the command", () => {
    const script = relayScript({ host: '127.0.0.1', port: 9000 });
    expect(script).not.toContain('/etc/hosts');
    expect(script).toContain('TCP-LISTEN:9000,bind=127.0.0.1');
    expect(script).toContain(' 0100007F:2328 00000000:0000 0A ');
    expect(script.trim().endsWith('exec "$@"')).toBe(true);
    expect(relayScript({ host: 's3.example.test', port: 443 })).toContain(
      "echo '127.0.0.1 s3.example.test' >> /etc/hosts",
    );
    expect(() => relayScript({ host: "s3'; rm -rf /data; '", port: 443 })).toThrow(
      /host name restic cannot use/,
    );
  });
});

describe('the relay directory', () => {
  it('is refused when others can write into it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hostctl-relay-open-'));
    await chmod(dir, 0o777);
    try {
      await expect(openS3Relay(dir, { host: '127.0.0.1', port: 9 })).rejects.toThrow(/mode 0700/);
      await chmod(dir, 0o700);
      const relay = await openS3Relay(dir, { host: '127.0.0.1', port: 9 });
      await relay.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
