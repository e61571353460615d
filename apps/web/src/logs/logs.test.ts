import { describe, expect, it } from 'vitest';
import { LogBuffer, type LogLine } from './log-buffer.ts';
import { isAtBottom, rowWindow } from './virtual-window.ts';

const line = (message: string): LogLine => ({ timestamp: '2026-01-01T00:00:00Z', stream: 'stdout', message });
const lines = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => line(`line ${from + i}`));

describe('LogBuffer', () => {
  it('keeps the newest lines up to its capacity', () => {
    const buffer = new LogBuffer(1000);
    buffer.append(lines(0, 600));
    buffer.append(lines(600, 600));
    expect(buffer.size).toBe(1000);
    expect(buffer.at(0)?.message).toBe('line 200');
    expect(buffer.at(999)?.message).toBe('line 1199');
  });

  it('searches case-insensitively, then tests only new lines, and stays right after the cap drops lines', () => {
    const buffer = new LogBuffer(100);
    buffer.append([line('GET /health 200'), line('boot'), line('get /api 500')]);
    buffer.setSearch('get');
    expect(buffer.visibleCount).toBe(2);
    expect(buffer.at(1)?.message).toBe('get /api 500');
    buffer.append([line('ready'), line('GET /late')]);
    expect(buffer.visibleCount).toBe(3);
    buffer.append(lines(0, 100)); // drops the first five lines, all three matches among them
    expect(buffer.visibleCount).toBe(0);
    buffer.append([line('GET /after')]);
    expect(buffer.visibleCount).toBe(1);
    expect(buffer.at(0)?.message).toBe('GET /after');
    buffer.setSearch('');
    expect(buffer.visibleCount).toBe(100);
  });

  it('holds 50,000 lines and searches them', () => {
    const buffer = new LogBuffer();
    for (let i = 0; i < 50; i++) buffer.append(lines(i * 1000, 1000));
    expect(buffer.size).toBe(50_000);
    buffer.setSearch('line 4999');
    expect(buffer.visibleCount).toBe(11); // 4999 and 49990–49999
  });
});

describe('rowWindow', () => {
  it('renders only the rows in view plus the overscan', () => {
    const view = rowWindow({
      scrollTop: 20_000,
      viewportHeight: 400,
      rowHeight: 20,
      count: 50_000,
      overscan: 5,
    });
    expect(view).toEqual({ start: 995, end: 1026, offset: 19_900, total: 1_000_000 });
    expect(view.end - view.start).toBeLessThan(40);
  });

  it('clamps at both ends and for short lists', () => {
    expect(
      rowWindow({ scrollTop: -50, viewportHeight: 400, rowHeight: 20, count: 50_000, overscan: 5 }),
    ).toMatchObject({
      start: 0,
      offset: 0,
    });
    const bottom = rowWindow({
      scrollTop: 9e9,
      viewportHeight: 400,
      rowHeight: 20,
      count: 50_000,
      overscan: 5,
    });
    expect(bottom.end).toBe(50_000);
    expect(bottom.start).toBe(50_000 - 20 - 5);
    expect(rowWindow({ scrollTop: 0, viewportHeight: 400, rowHeight: 20, count: 3 })).toEqual({
      start: 0,
      end: 3,
      offset: 0,
      total: 60,
    });
  });

  it('knows when the view follows the tail', () => {
    expect(isAtBottom(9600, 400, 10_000, 20)).toBe(true);
    expect(isAtBottom(9585, 400, 10_000, 20)).toBe(true);
    expect(isAtBottom(9000, 400, 10_000, 20)).toBe(false);
  });
});
