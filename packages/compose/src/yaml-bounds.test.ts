import { LIMITS } from '@hostctl/domain';
import { HOSTILE_YAML, interpolationBomb, legitCompose } from '@hostctl/testing';
import { describe, expect, it } from 'vitest';
import { parseCompose } from './compose.parser.js';
import { problemsOf } from './test-helpers.js';
import { YAML_BOUNDS } from './yaml-bounds.js';

// The parse bounds are shown by what they refuse, not by timing: each hostile document must be
// refused with a message naming the bound, and honest documents near the bounds must pass.
describe('hostile documents are refused by a named bound', () => {
  const expectations: Record<string, RegExp> = {
    'billion laughs': /expands to more than/,
    'wide aliases': /expands to more than/,
    'nested small aliases': /expands to more than/,
    'merge key chain': /expands to more than/,
    'deep flow nesting': /nested deeper than 64 levels/,
    'deep closed flow nesting': /nested deeper than 64 levels/,
    'deep flow mappings': /nested deeper than 64 levels/,
    'deep block nesting': /nested deeper than 64 levels/,
    'deep compact sequences': /nested deeper than 64 levels/,
    'deep through aliases': /nested deeper than 64 levels/,
    'huge scalar aliased': /expands to more than 4 MiB/,
    'many items': /more than 150,000 YAML tokens/,
    'many keys': /more than 150,000 YAML tokens/,
    'self-referencing alias': /refers to a node that contains it/,
  };

  it.each(Object.keys(HOSTILE_YAML))('%s', (name) => {
    const text = HOSTILE_YAML[name]!();
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(LIMITS.composeMaxBytes);
    const problems = problemsOf(text);
    expect(problems).toEqual([{ path: '(root)', message: expect.stringMatching(expectations[name]!) }]);
  });

  it('covers every hostile document', () => {
    expect(Object.keys(expectations).sort()).toEqual(Object.keys(HOSTILE_YAML).sort());
  });

  it('refuses interpolation that would pass the budget (3 bytes of ${A} standing for 64 KiB)', () => {
    const { compose, variables } = interpolationBomb();
    expect(problemsOf(compose, variables)).toContainEqual({
      path: expect.stringMatching(/^services\.web\.environment\./),
      message: 'after interpolation the document exceeds 4 MiB',
    });
  });

  it('refuses one string of many ${A} without building it whole', () => {
    const compose = `services:\n  web:\n    image: app:1\n    command: "${'${A}'.repeat(40_000)}"\n`;
    const problems = problemsOf(compose, { A: 'a'.repeat(64 * 1024) });
    expect(problems.map((problem) => problem.message)).toContain(
      'after interpolation the document exceeds 4 MiB',
    );
  });

  it('refuses nested interpolation defaults past 8 levels', () => {
    const nested = `${'${U:-'.repeat(5000)}x${'}'.repeat(5000)}`;
    const problems = problemsOf(`services:\n  web:\n    image: app:1\n    command: "${nested}"\n`);
    expect(problems.map((problem) => problem.message)).toContain('interpolation nested deeper than 8 levels');
  });

  it('lists at most 100 problems, counting the rest in the message', () => {
    const keys = Array.from({ length: 5000 }, (_, i) => `    bad${i}: 1`).join('\n');
    const text = `services:\n  web:\n    image: app:1\n${keys}\n`;
    expect(problemsOf(text)).toHaveLength(100);
    expect(() => parseCompose(text, {})).toThrow(/and 4999 more/);
  });
});

describe('honest documents near the bounds are accepted', () => {
  it('a 250 KB compose of 20 services with shared anchors', () => {
    const text = legitCompose(20, 150, 60);
    expect(Buffer.byteLength(text)).toBeGreaterThan(200_000);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(LIMITS.composeMaxBytes);
    expect(problemsOf(text)).toEqual([]);
    expect(parseCompose(text, {}).containers).toHaveLength(20);
  });

  it('nesting 60 levels deep in an extension field', () => {
    const text = `x-deep: ${'['.repeat(60)}1${']'.repeat(60)}\nservices:\n  web:\n    image: app:1\n`;
    expect(problemsOf(text)).toEqual([]);
  });

  it('a 1,000-item list aliased 90 times (90,000 nodes, under the node bound)', () => {
    const list = Array.from({ length: 1000 }, (_, i) => `  - i${i}`).join('\n');
    const uses = Array.from({ length: 90 }, () => '  - *l').join('\n');
    const text = `x-l: &l\n${list}\nx-u:\n${uses}\nservices:\n  web:\n    image: app:1\n`;
    expect(problemsOf(text)).toEqual([]);
  });

  it('14,000 environment entries in a block mapping (220 KB, about 100,000 tokens)', () => {
    const env = Array.from({ length: 14_000 }, (_, i) => `      K${i}: v`).join('\n');
    const plan = parseCompose(`services:\n  web:\n    image: app:1\n    environment:\n${env}\n`, {});
    expect(Object.keys(plan.containers[0]!.environment)).toHaveLength(14_000);
  });

  it('variables of 64 KiB used a few times', () => {
    const text = `services:\n  web:\n    image: app:1\n    environment:\n      A: "\${A}"\n      B: "\${A}\${A}"\n`;
    const plan = parseCompose(text, { A: 'a'.repeat(64 * 1024) });
    expect(plan.containers[0]!.environment.B).toHaveLength(128 * 1024);
  });

  it('the bounds are the documented ones', () => {
    expect(YAML_BOUNDS).toEqual({
      maxDepth: 64,
      maxNodes: 100_000,
      maxBytes: 4 * 1024 * 1024,
      maxTokens: 150_000,
    });
  });
});

describe('expansion keeps YAML semantics', () => {
  it('an alias refers to the last anchor of its name before it', () => {
    const text =
      'x-a: &a {v: 1}\nx-b: {inner: &a {v: 2}}\nservices:\n  web:\n    image: app:1\n    labels: *a\n';
    expect(parseCompose(text, {}).containers[0]!.labels).toEqual({ v: '2' });
  });

  it('keys written in a map win over merged ones; earlier merge sources win over later ones', () => {
    const text =
      'x-a: &a {A: from-a, B: from-a}\nx-b: &b {A: from-b, C: from-b}\n' +
      'services:\n  web:\n    image: app:1\n    environment:\n      <<: [*a, *b]\n      B: own\n';
    expect(parseCompose(text, {}).containers[0]!.environment).toEqual({ A: 'from-a', B: 'own', C: 'from-b' });
  });

  it('refuses an alias with no anchor before it', () => {
    expect(problemsOf('services:\n  web:\n    image: *nothing\n')).not.toEqual([]);
  });

  it('refuses several documents in one definition', () => {
    expect(problemsOf('services:\n  web:\n    image: app:1\n---\nservices: {}\n')).toEqual([
      { path: '(root)', message: expect.stringMatching(/exactly one YAML document/) },
    ]);
  });
});
