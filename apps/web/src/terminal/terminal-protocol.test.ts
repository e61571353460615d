import { describe, expect, it } from 'vitest';
import {
  closeReason,
  parseServerFrame,
  resizeFrame,
  stdinFrames,
  terminalPath,
} from './terminal-protocol.ts';

describe('closeReason', () => {
  it.each([
    [4401, /signed out|revoked/],
    [4403, /role no longer allows/],
    [4404, /deleted/],
    [4408, /nothing was typed/],
    [4409, /No running container/],
    [4429, /Too many terminals/],
    [4503, /No worker took the terminal/],
  ])('says what %i means', (code, words) => {
    expect(closeReason(code, true)).toMatch(words);
  });

  it('tells a refused handshake (closed before it opened) from a connection lost later', () => {
    expect(closeReason(1006, false)).toMatch(/could not be opened/);
    expect(closeReason(1006, true)).toBe('The connection to the terminal was lost (code 1006).');
  });

  it('never shows a bare number for the codes the API sends', () => {
    for (const code of [4401, 4403, 4404, 4408, 4409, 4429, 4503]) {
      expect(closeReason(code, true)).not.toContain(String(code));
    }
  });
});

describe('parseServerFrame', () => {
  it('reads each frame the API sends', () => {
    expect(parseServerFrame({ type: 'ready', container: 'c-1' })).toEqual({
      type: 'ready',
      container: 'c-1',
    });
    expect(parseServerFrame({ type: 'output', data: 'hi\r\n' })).toEqual({ type: 'output', data: 'hi\r\n' });
    expect(parseServerFrame({ type: 'exit', exit_code: 3 })).toEqual({ type: 'exit', exitCode: 3 });
    expect(parseServerFrame({ type: 'error', code: 'conflict', detail: 'no container' })).toEqual({
      type: 'error',
      code: 'conflict',
      detail: 'no container',
    });
  });

  it('ignores what it does not know or what is malformed', () => {
    expect(parseServerFrame({ type: 'pong' })).toBeNull();
    expect(parseServerFrame({ type: 'exit', exit_code: '3' })).toBeNull();
    expect(parseServerFrame({ type: 'output', data: 42 })).toBeNull();
  });
});

describe('stdinFrames', () => {
  it('sends typing as one frame', () => {
    expect(stdinFrames('ls\r')).toEqual(['{"type":"stdin","data":"ls\\r"}']);
  });

  it('splits a paste over 64 Ki characters without cutting a surrogate pair', () => {
    const paste = 'a'.repeat(65_535) + '😀' + 'b'.repeat(10);
    const frames = stdinFrames(paste).map((frame) => (JSON.parse(frame) as { data: string }).data);
    expect(frames.every((data) => data.length <= 65_536)).toBe(true);
    expect(frames.join('')).toBe(paste);
    expect(frames[0]).toBe('a'.repeat(65_535));
  });
});

it('resizeFrame keeps sizes within 1–1000', () => {
  expect(JSON.parse(resizeFrame(120, 40))).toEqual({ type: 'resize', cols: 120, rows: 40 });
  expect(JSON.parse(resizeFrame(0, 5000))).toEqual({ type: 'resize', cols: 1, rows: 1000 });
});

it('terminalPath names the component, or leaves the default to the API', () => {
  expect(terminalPath('s 1', '')).toBe('/api/services/s%201/exec');
  expect(terminalPath('s1', 'worker')).toBe('/api/services/s1/exec?component=worker');
});
