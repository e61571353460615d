import { describe, expect, it } from 'vitest';
import { cronProblem, isTimeZone, nextTime, timesUntil } from './index.js';

describe('cronProblem', () => {
  it.each([
    ['a five-field expression', '0 3 * * *', 'Europe/Berlin'],
    ['a six-field expression (seconds first)', '*/30 * * * * *', 'UTC'],
    ['a nickname', '@hourly', 'America/New_York'],
  ])('accepts %s', (_label, cron, timeZone) => {
    expect(cronProblem({ cron, timeZone }, 30)).toBeNull();
  });

  it.each([
    ['garbage', 'every day', 'UTC', 'cron'],
    ['a minute of 61', '61 * * * *', 'UTC', 'cron'],
    ['a year field', '0 0 1 1 * 2030 2031', 'UTC', 'cron'],
    ['a date that never comes', '0 0 30 2 *', 'UTC', 'cron'],
    ['times closer than the minimum', '* * * * * *', 'UTC', 'cron'],
    ['an unknown time zone', '0 3 * * *', 'Mars/Olympus', 'time_zone'],
    ['a blank time zone', '0 3 * * *', '', 'time_zone'],
  ])('refuses %s, naming the field', (_label, cron, timeZone, field) => {
    expect(cronProblem({ cron, timeZone }, 60)?.field).toBe(field);
  });
});

describe('times', () => {
  it('reads the expression in the time zone, across a daylight-saving change', () => {
    const berlin = { cron: '0 3 * * *', timeZone: 'Europe/Berlin' };
    // 29 March 2026: clocks go from 02:00 to 03:00 CET→CEST, so 03:00 local is 01:00 UTC.
    expect(nextTime(berlin, new Date('2026-03-28T12:00:00Z'))?.toISOString()).toBe(
      '2026-03-29T01:00:00.000Z',
    );
    expect(nextTime(berlin, new Date('2026-03-27T12:00:00Z'))?.toISOString()).toBe(
      '2026-03-28T02:00:00.000Z',
    );
  });

  it('lists the due times from the cursor and says where the next pass starts', () => {
    const minutely = { cron: '* * * * *', timeZone: 'UTC' };
    const first = new Date('2026-01-01T00:00:00Z');
    const { times, next } = timesUntil(minutely, first, new Date('2026-01-01T00:03:30Z'), 100);
    expect(times.map((t) => t.toISOString())).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:01:00.000Z',
      '2026-01-01T00:02:00.000Z',
      '2026-01-01T00:03:00.000Z',
    ]);
    expect(next?.toISOString()).toBe('2026-01-01T00:04:00.000Z');
    const capped = timesUntil(minutely, first, new Date('2026-01-01T00:03:30Z'), 2);
    expect(capped.times).toHaveLength(2);
    expect(capped.next?.toISOString()).toBe('2026-01-01T00:02:00.000Z');
  });

  it('knows the zones of the tz database', () => {
    expect(isTimeZone('Asia/Kolkata')).toBe(true);
    expect(isTimeZone('Europe/Atlantis')).toBe(false);
  });
});
