import { describe, expect, it } from 'vitest';
import {
  commandFromLines,
  commandText,
  commandToLines,
  duration,
  isFinalRun,
  runTrigger,
} from './job-format.ts';

describe('commands in the form and in tables', () => {
  it('reads one argument per line, keeping spaces and quotes inside an argument', () => {
    const command = commandFromLines('sh\r\n-c\necho "a b" && exit 3\n\n');
    expect(command).toEqual(['sh', '-c', 'echo "a b" && exit 3']);
    expect(commandFromLines(commandToLines(command))).toEqual(command);
  });

  it('quotes an argument whose end a reader could not see', () => {
    expect(commandText(['sh', '-c', 'echo hi', ''])).toBe('sh -c "echo hi" ""');
    expect(commandText(['./manage.py', 'migrate'])).toBe('./manage.py migrate');
  });
});

describe('runs', () => {
  it.each([
    [{ schedule_id: null, scheduled_for: null, attempt: 1 }, undefined, 'one-off run'],
    [{ schedule_id: 's', scheduled_for: null, attempt: 1 }, 'nightly', 'run now (schedule nightly)'],
    [{ schedule_id: 's', scheduled_for: '2026-11-28T02:30:00Z', attempt: 1 }, undefined, 'schedule'],
    [
      { schedule_id: 's', scheduled_for: '2026-11-28T02:30:00Z', attempt: 3 },
      'nightly',
      'schedule nightly, retry 2',
    ],
  ])('names the trigger of %o', (run, name, expected) => {
    expect(runTrigger(run, name)).toBe(expected);
  });

  it('writes durations as people read them', () => {
    expect([null, 812, 3240, 125_000].map(duration)).toEqual(['—', '812 ms', '3.2 s', '2 min 5 s']);
  });

  it('treats missed, skipped and cancelled as final, queued and running as not', () => {
    expect(['missed', 'skipped', 'cancelled', 'timed_out'].every(isFinalRun)).toBe(true);
    expect(['queued', 'running'].some(isFinalRun)).toBe(false);
  });
});
