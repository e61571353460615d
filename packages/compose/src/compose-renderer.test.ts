import { describe, expect, it } from 'vitest';
import { parseCompose } from './compose.parser.js';
import { renderCompose } from './compose.renderer.js';
import { splitShellWords } from './shell-words.js';
import { formatBytes, formatDuration, parseBytes, parseDuration } from './units.js';

describe('renderCompose', () => {
  const source = `x-common: &common
  restart: always
services:
  web:
    <<: *common
    image: local/busybox:1
    command: sh -c 'echo "$$PATH" \${GREETING}'
    ports: ["8080:8080"]
    environment: {PRICE: "\${PRICE}", LIST: "a,b"}
    volumes: ["data:/data:ro"]
    depends_on: [cache]
    healthcheck: {test: [CMD, wget, -q, -O-, "http://localhost:8080/"], interval: 90s}
    deploy: {resources: {limits: {memory: 1536m, cpus: 1.25}}}
  cache:
    image: local/busybox:1
    healthcheck: {disable: true}
    restart: "no"
    init: false
volumes:
  data:
`;

  it('shows exactly what runs and parses back to the same plan', () => {
    const plan = parseCompose(source, { GREETING: 'hi', PRICE: '$5' });
    const rendered = renderCompose(plan);
    expect(rendered).not.toContain('x-common');
    expect(rendered).toContain('PRICE: $$5');
    expect(rendered).toContain('memory: 1536m');
    expect(rendered).toContain('interval: 90s');
    expect(parseCompose(rendered, {})).toEqual(plan);
  });

  it('is stable: rendering a rendered document changes nothing', () => {
    const once = renderCompose(parseCompose(source, { GREETING: 'hi', PRICE: '1' }));
    expect(renderCompose(parseCompose(once, {}))).toBe(once);
  });
});

describe('splitShellWords', () => {
  it.each([
    ['a b  c', ['a', 'b', 'c']],
    [`sh -c 'echo "x y"'`, ['sh', '-c', 'echo "x y"']],
    ['say "a \\"b\\" \\n"', ['say', 'a "b" \\n']],
    ['a\\ b', ['a b']],
    ['"" x', ['', 'x']],
    ['', []],
  ])('splits %j', (text, words) => {
    expect(splitShellWords(text)).toEqual(words);
  });

  it.each(["'open", '"open', 'trailing\\'])('refuses %j', (text) => {
    expect(splitShellWords(text)).toBeUndefined();
  });
});

describe('units', () => {
  it.each([
    ['10s', 10_000],
    ['1m30s', 90_000],
    ['1h', 3_600_000],
    ['250ms', 250],
    ['1.5s', 1500],
  ])('parses duration %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
    expect(parseDuration(formatDuration(ms))).toBe(ms);
  });

  it.each(['10', 's', '1d', '-1s'])('refuses duration %s', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it.each([
    ['256M', 256 * 1024 ** 2],
    ['1g', 1024 ** 3],
    ['512kb', 512 * 1024],
    [1048576, 1048576],
    ['100b', 100],
  ])('parses size %s', (text, bytes) => {
    expect(parseBytes(text)).toBe(bytes);
    expect(parseBytes(formatBytes(bytes))).toBe(bytes);
  });

  it.each(['1t', 'lots', '-1m', 1.5])('refuses size %s', (text) => {
    expect(parseBytes(text)).toBeUndefined();
  });
});
