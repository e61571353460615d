import { describe, expect, it } from 'vitest';
import { LogBuffer } from '../logs/log-buffer.ts';
import { RunOutputLines } from './run-output-lines.ts';

const chunk = (message: string, stream = 'stdout') => ({
  timestamp: '2026-01-01T00:00:00Z',
  stream,
  message,
});

function shown(buffer: LogBuffer): string[] {
  return Array.from({ length: buffer.visibleCount }, (_, i) => buffer.at(i)?.message ?? '?');
}

describe('RunOutputLines', () => {
  it('cuts chunks at newlines and continues a line the previous chunk left open', () => {
    const buffer = new LogBuffer();
    const lines = new RunOutputLines(buffer);
    lines.add([chunk('Applying 0042\nApplying 00'), chunk('43\r\n'), chunk('\nContinue? [y/N] ')]);
    expect(shown(buffer)).toEqual(['Applying 0042', 'Applying 0043', '', 'Continue? [y/N] ']);
    lines.add([chunk('y'), chunk('\ndone\n')]);
    expect(shown(buffer)).toEqual(['Applying 0042', 'Applying 0043', '', 'Continue? [y/N] y', 'done']);
  });

  it('starts a new row when the other stream prints, and keeps stderr marked', () => {
    const buffer = new LogBuffer();
    const lines = new RunOutputLines(buffer);
    lines.add([chunk('half'), chunk('boom\n', 'stderr'), chunk('other half\n')]);
    expect(shown(buffer)).toEqual(['half', 'boom', 'other half']);
    expect(buffer.at(1)?.stream).toBe('stderr');
  });

  it('finds a line the search matches only once its second piece arrived', () => {
    const buffer = new LogBuffer();
    buffer.setSearch('error: disk');
    const lines = new RunOutputLines(buffer);
    lines.add([chunk('ok\nerror: '), chunk('disk full\n')]);
    expect(shown(buffer)).toEqual(['error: disk full']);
  });
});
