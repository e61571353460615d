/**
 * Compose documents an attacker sends to exhaust the parser: each is small on the wire and
 * expensive to expand, nest or interpolate. Shared by the parser's unit tests, the API tests and
 * bench/suites/parse.ts so that the refusals tested are exactly the ones measured.
 */
const TAIL = 'services:\n  web:\n    image: local/busybox:1\n';

function lines(count: number, line: (index: number) => string): string {
  return Array.from({ length: count }, (_, index) => line(index)).join('\n');
}

export const HOSTILE_YAML: Record<string, () => string> = {
  /** The classic: 9 levels, each a list of 9 aliases of the previous (9^9 = 387 million leaves). */
  'billion laughs': () => {
    const levels = ['a0: &a0 ["lol"]'];
    for (let i = 1; i <= 9; i += 1)
      levels.push(`a${i}: &a${i} [${Array.from({ length: 9 }, () => `*a${i - 1}`).join(', ')}]`);
    return `x-bomb:\n${levels.map((line) => `  ${line}`).join('\n')}\n${TAIL}`;
  },
  /** Wide, not deep: one 2,000-item list referenced 199 times (under any alias-count limit). */
  'wide aliases': () =>
    `x-list: &list\n${lines(2000, (i) => `  - item-${i}-${'x'.repeat(40)}`)}\n` +
    `x-uses:\n${lines(199, () => '  - *list')}\n${TAIL}`,
  /** Small aliases nested in levels: 12 levels of 4 aliases each (4^12 = 16.7 million nodes). */
  'nested small aliases': () => {
    const levels = ['l0: &l0 {k: v}'];
    for (let i = 1; i <= 12; i += 1)
      levels.push(`l${i}: &l${i} [${Array.from({ length: 4 }, () => `*l${i - 1}`).join(', ')}]`);
    return `x-levels:\n${levels.map((line) => `  ${line}`).join('\n')}\n${TAIL}`;
  },
  /** Merge keys in a chain, each level merging the previous one twice through a list. */
  'merge key chain': () => {
    const levels = ['m0: &m0 {k0: v}'];
    for (let i = 1; i <= 40; i += 1) levels.push(`m${i}: &m${i} {<<: [*m${i - 1}, *m${i - 1}], k${i}: v}`);
    const wide = `x-wide:\n${lines(3000, (i) => `  w${i}: {<<: *m40}`)}`;
    return `x-merge:\n${levels.map((line) => `  ${line}`).join('\n')}\n${wide}\n${TAIL}`;
  },
  /** 125,000 unclosed `[`: the library's parser alone spends seconds on it. */
  'deep flow nesting': () => `x-deep: ${'['.repeat(125_000)}\n${TAIL}`,
  /** 100,000 balanced `[`…`]`: the library runs out of heap on it. */
  'deep closed flow nesting': () => `x-deep: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n${TAIL}`,
  /** Flow mappings nested 50,000 deep. */
  'deep flow mappings': () => `x-deep: ${'{a: '.repeat(50_000)}\n${TAIL}`,
  /** Block mappings indented one space more per level (700 levels in 245 KB). */
  'deep block nesting': () => `${TAIL}x-deep:\n${lines(700, (i) => `${' '.repeat(i + 1)}k:`)}\n`,
  /** Compact nested sequences: `- - - - …` is one more level every two characters. */
  'deep compact sequences': () => `${TAIL}x-deep:\n  ${'- '.repeat(100_000)}x\n`,
  /** An anchor nested 40 deep, aliased inside itself 40 deep again, and so on: depth by aliases. */
  'deep through aliases': () => {
    const levels = [`d0: &d0 ${'['.repeat(30)}1${']'.repeat(30)}`];
    for (let i = 1; i <= 4; i += 1) levels.push(`d${i}: &d${i} ${'['.repeat(30)}*d${i - 1}${']'.repeat(30)}`);
    return `x-deep:\n${levels.map((line) => `  ${line}`).join('\n')}\n${TAIL}`;
  },
  /** A 200 KB scalar aliased 30 times: few nodes, many bytes. */
  'huge scalar aliased': () =>
    `x-big: &big "${'b'.repeat(200_000)}"\nx-uses: [${Array.from({ length: 30 }, () => '*big').join(', ')}]\n${TAIL}`,
  /** 120,000 one-character items: no alias at all, just many nodes. */
  'many items': () => `x-many: [${'1,'.repeat(120_000)}1]\n${TAIL}`,
  /** 52,000 distinct keys without values in a flow mapping (each key and its null count). */
  'many keys': () =>
    `x-many: {${Array.from({ length: 52_000 }, (_, i) => i.toString(36)).join(',')}}\n${TAIL}`,
  /** An alias inside the node it names: a cycle in the expanded document. */
  'self-referencing alias': () => `x-loop: &loop [1, *loop]\n${TAIL}`,
};

/** `${A}` many times with a large variable value: 3 bytes of text each expand to 32 KiB. */
export function interpolationBomb(): { compose: string; variables: Record<string, string> } {
  return {
    compose: `services:\n  web:\n    image: local/busybox:1\n    environment:\n${lines(2000, (i) => `      V${i}: "\${A}\${A}\${A}"`)}\n`,
    // 32 KiB: the largest value a variable may hold (docs/limits.md); 6,000 uses blow the budget.
    variables: { A: 'a'.repeat(32 * 1024) },
  };
}

/** The same kind of document, honest: many services, environments, anchors used a few times. */
export function legitCompose(services: number, envPerService: number, valueBytes = 40): string {
  const common = `x-common: &common\n  restart: unless-stopped\n  labels:\n    team: web\n`;
  const body = Array.from({ length: services }, (_, s) => {
    const env = lines(envPerService, (e) => `      VAR_${e}: "${'v'.repeat(valueBytes)}-${s}-${e}"`);
    return `  s${s}:\n    <<: *common\n    image: local/busybox:1\n    command: ["httpd", "-f", "-p", "8080"]\n    expose: ["8080"]\n    environment:\n${env}`;
  }).join('\n');
  return `${common}services:\n${body}\n`;
}
