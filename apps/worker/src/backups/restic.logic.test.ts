import { describe, expect, it } from 'vitest';
import type { Plan, PlanContainer } from '@hostctl/compose';
import { backupMethodOf } from './backup.processor.js';
import { createDerivedRepositoryKeys } from './repository.js';
import { backupCommand, engineReason, parseBackupSummary, restoreCommand } from './restic.js';

const summary = (fields: Record<string, unknown>) =>
  JSON.stringify({ message_type: 'summary', total_bytes_processed: 3, total_files_processed: 1, ...fields });

describe('reading restic backup --json', () => {
  it('takes the snapshot, bytes and files from the summary line', () => {
    const stdout = [
      '{"message_type":"status","percent_done":0.5}',
      summary({ snapshot_id: '9c6d33e0', total_bytes_processed: 2048, total_files_processed: 7 }),
      '',
    ].join('\n');
    expect(parseBackupSummary(stdout)).toEqual({ snapshotId: '9c6d33e0', bytes: 2048, files: 7 });
  });

  it.each([
    ['no summary (an interrupted run)', '{"message_type":"status","percent_done":0.9}\n'],
    ['a summary without a snapshot', summary({})],
    ['a snapshot id that is not hex', summary({ snapshot_id: '../../etc' })],
    ['no output at all', ''],
  ])('reports no snapshot for %s', (_label, stdout) => {
    expect(parseBackupSummary(stdout)).toBeNull();
  });
});

describe('restic command lines', () => {
  it('tag a backup with its run, service and volume, and read only the volume mount', () => {
    const command = backupCommand({ backupId: 'b-1', serviceId: 's-1', volume: 'data' });
    expect(command).toEqual(expect.arrayContaining(['backup:b-1', 'service:s-1', 'volume:data']));
    expect(command.at(-1)).toBe('/data');
  });

  it('refuse a snapshot id that could be an option or a path', () => {
    expect(restoreCommand('9c6d33e0').at(-1)).toBe('9c6d33e0');
    for (const bad of ['--help', 'latest', '9c6d33e0 --target /etc', ''])
      expect(() => restoreCommand(bad)).toThrow(/not a restic snapshot id/);
  });

  it('keep the last lines of the error output as the reason', () => {
    expect(engineReason('a\nb\nc\nFatal: wrong password or no key found\n')).toBe(
      'b | c | Fatal: wrong password or no key found',
    );
    expect(engineReason('', '')).toBe('no output');
  });
});

describe('repository passwords', () => {
  it('differ per customer and per operator key, and are stable', () => {
    const keys = createDerivedRepositoryKeys('operator key one');
    const a = keys.passwordFor('11111111-1111-4111-8111-111111111111');
    expect(a).toBe(keys.passwordFor('11111111-1111-4111-8111-111111111111'));
    expect(a).not.toBe(keys.passwordFor('22222222-2222-4222-8222-222222222222'));
    expect(a).not.toBe(
      createDerivedRepositoryKeys('operator key two').passwordFor('11111111-1111-4111-8111-111111111111'),
    );
    expect(a).not.toContain('operator key one');
  });
});

describe('the consistency method of a plan', () => {
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

  it('is live unless a component declares stop', () => {
    expect(backupMethodOf(plan(container('web', {})))).toBe('live');
    expect(backupMethodOf(plan(container('web', { 'hostctl.backup.method': 'live' })))).toBe('live');
    expect(
      backupMethodOf(plan(container('web', {}), container('db', { 'hostctl.backup.method': 'stop' }))),
    ).toBe('stop');
  });

  it('names the label of a method it does not know', () => {
    expect(() => backupMethodOf(plan(container('db', { 'hostctl.backup.method': 'snapshot' })))).toThrow(
      'services.db.labels.hostctl.backup.method must be stop or live, not "snapshot"',
    );
  });
});
