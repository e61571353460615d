import { describe, expect, it } from 'vitest';
import {
  TRUNCATION_MARKER,
  createLineSplitter,
  normalizeTimestamp,
  parseLine,
  toDockerSince,
} from './log-lines.js';

function split(chunks: string[], maxBytes = 16): { line: string; isTruncated: boolean }[] {
  const lines: { line: string; isTruncated: boolean }[] = [];
  const splitter = createLineSplitter(
    (line, isTruncated) => lines.push({ line: line.toString(), isTruncated }),
    maxBytes,
  );
  for (const chunk of chunks) splitter.write(Buffer.from(chunk));
  splitter.end();
  return lines;
}

describe('line splitter', () => {
  it('joins lines across chunks and strips CR', () => {
    expect(split(['a', 'b\nc\r\n', '\nd'])).toEqual([
      { line: 'ab', isTruncated: false },
      { line: 'c', isTruncated: false },
      { line: '', isTruncated: false },
      { line: 'd', isTruncated: false },
    ]);
  });

  it('cuts a line past the bound and skips the rest of it', () => {
    const bound = 16 + 64; // message bound plus the timestamp allowance
    const lines = split(['x'.repeat(bound - 10), 'y'.repeat(30), 'z'.repeat(5), '\nnext\n']);
    expect(lines).toEqual([
      { line: 'x'.repeat(bound - 10) + 'y'.repeat(10), isTruncated: true },
      { line: 'next', isTruncated: false },
    ]);
  });
});

describe('timestamps', () => {
  it('normalises to UTC with nine fraction digits, so they compare as strings', () => {
    expect(normalizeTimestamp('2025-01-02T03:04:05.123456789Z')).toBe('2025-01-02T03:04:05.123456789Z');
    expect(normalizeTimestamp('2025-01-02T03:04:05.1Z')).toBe('2025-01-02T03:04:05.100000000Z');
    expect(normalizeTimestamp('2025-01-02T03:04:05Z')).toBe('2025-01-02T03:04:05.000000000Z');
    expect(normalizeTimestamp('2025-01-02T05:04:05.5+02:00')).toBe('2025-01-02T03:04:05.500000000Z');
    expect(normalizeTimestamp('yesterday')).toBeNull();
    expect('2025-01-02T03:04:05.000000010Z' > '2025-01-02T03:04:05.000000009Z').toBe(true);
  });

  it('converts a cursor to Docker since (unix seconds with nanoseconds)', () => {
    expect(toDockerSince('1970-01-01T00:01:40.000000007Z')).toBe('100.000000007');
  });

  it('splits the prefix from the message and bounds the message', () => {
    expect(parseLine(Buffer.from('2025-01-02T03:04:05.000000001Z hello world'), false)).toEqual({
      ts: '2025-01-02T03:04:05.000000001Z',
      message: 'hello world',
    });
    expect(parseLine(Buffer.from('no timestamp'), false)).toEqual({ ts: null, message: 'no timestamp' });
    expect(parseLine(Buffer.from('2025-01-02T03:04:05Z ééé'), true, 3).message).toBe(`é${TRUNCATION_MARKER}`);
  });
});
