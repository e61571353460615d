import { describe, expect, it } from 'vitest';
import type { Backup } from '@hostctl/api-client';
import {
  backupState,
  duration,
  isActive,
  restoreState,
  retentionText,
  size,
  verifyState,
  volumeNames,
} from './backup-format.ts';

const NOW = Date.parse('2026-11-28T12:00:00.000Z');
const backup = (change: Partial<Backup> = {}): Backup => ({
  id: 'b1',
  service_id: 's1',
  status: 'succeeded',
  method: 'live',
  target: 'local',
  release_id: null,
  volumes: [{ name: 'data', snapshot_id: 'abcdef12', bytes: 10, files: 1 }],
  size_bytes: 10,
  duration_ms: 1000,
  error: null,
  log: '',
  verify_status: null,
  verify_error: null,
  verified_at: null,
  last_restore: null,
  scheduled_for: null,
  created_at: '2026-11-28T11:00:00.000Z',
  started_at: null,
  finished_at: null,
  ...change,
});
const restore = (status: 'queued' | 'running' | 'succeeded' | 'failed', service = 's1') => ({
  id: 'r1',
  service_id: service,
  status,
  error: status === 'failed' ? 'restic restore failed' : null,
  created_at: '2026-11-28T11:50:00.000Z',
  finished_at: status === 'succeeded' ? '2026-11-28T11:55:00.000Z' : null,
});

describe('backup states in words', () => {
  it('says why a backup did not succeed and that an expired one cannot be restored', () => {
    expect(backupState(backup({ status: 'failed', error: 'target down' }))).toBe('Failed: target down');
    expect(backupState(backup({ status: 'expired' }))).toMatch(/cannot be restored/);
    expect(backupState(backup({ status: 'missed', error: 'no worker for 7 minutes' }))).toBe(
      'Missed: no worker for 7 minutes',
    );
    expect(backupState(backup({ status: 'queued' }))).toBe('Queued: waiting for a worker');
  });

  it('tells a check and a restore, in place or into a new service', () => {
    expect(verifyState(backup(), NOW)).toBe('Not verified');
    expect(
      verifyState(backup({ verify_status: 'passed', verified_at: '2026-11-28T10:00:00.000Z' }), NOW),
    ).toBe('Passed 2 hours ago');
    expect(verifyState(backup({ verify_status: 'failed', verify_error: 'restic check failed' }))).toBe(
      'Failed: restic check failed',
    );
    expect(restoreState(restore('running'), 's1', NOW)).toBe('Restoring');
    expect(restoreState(restore('succeeded'), 's1', NOW)).toBe('Restored 5 minutes ago');
    expect(restoreState(restore('failed', 's2'), 's1', NOW)).toBe(
      'Restore into a new service failed: restic restore failed',
    );
  });

  it('is active while a backup, a check or a restore goes on, and only then', () => {
    expect(isActive(backup())).toBe(false);
    expect(isActive(backup({ status: 'running' }))).toBe(true);
    expect(isActive(backup({ verify_status: 'queued' }))).toBe(true);
    expect(isActive(backup({ last_restore: restore('queued') }))).toBe(true);
    expect(isActive(backup({ last_restore: restore('failed') }))).toBe(false);
  });
});

describe('figures', () => {
  it('sizes, durations and volume lists as people read them', () => {
    expect(size(null)).toBe('—');
    expect(size(512)).toBe('512 bytes');
    expect(size(1536)).toBe('1.5 KiB');
    expect(size(300 * 1024 * 1024)).toBe('300 MiB');
    expect(duration(null)).toBe('—');
    expect(duration(400)).toBe('under 1 s');
    expect(duration(83_400)).toBe('1 min 23 s');
    expect(duration(120_000)).toBe('2 min');
    const volumes = (names: string[]) =>
      backup({ volumes: names.map((name) => ({ name, snapshot_id: 'x', bytes: 1, files: 1 })) });
    expect(volumeNames(volumes(['data']))).toBe('data');
    expect(volumeNames(volumes(['db', 'uploads', 'cache']))).toBe('db, uploads and cache');
  });

  it('retention: what the schedule sets and what falls back', () => {
    expect(retentionText({ keep_last: 3, keep_daily: 14, keep_weekly: null, keep_monthly: null })).toBe(
      "Keeps the last 3, 14 daily; weekly, monthly from the compose labels or the operator's defaults.",
    );
    expect(retentionText({ keep_last: 1, keep_daily: 0, keep_weekly: 0, keep_monthly: 0 })).toBe(
      'Keeps the last 1, 0 daily, 0 weekly, 0 monthly.',
    );
  });
});
