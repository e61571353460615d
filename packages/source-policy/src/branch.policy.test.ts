import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { checkBranch } from './branch.policy.js';

const valid = ['main', 'feature/x', 'release-1.2', 'a.b', 'user@host', 'v1', 'fix_#12', 'a/b/c', 'ünïcode'];
const invalid = [
  'a..b',
  'a b',
  'a~b',
  'a^b',
  'a:b',
  'a?b',
  'a*b',
  'a[b',
  'a\\b',
  'a\tb',
  '/a',
  'a/',
  'a//b',
  'a.',
  '.a',
  'a/.b',
  'a.lock',
  'a/b.lock/c',
  'a@{b',
  'x'.repeat(256),
];

/** What git itself says (argument array, no shell): the rules are meant to match it. */
function gitAccepts(name: string): boolean {
  return spawnSync('git', ['check-ref-format', '--branch', name], { encoding: 'utf8' }).status === 0;
}

describe('checkBranch mirrors git check-ref-format --branch', () => {
  it.each(valid)('accepts %s, like git', (name) => {
    expect(checkBranch(name)).toEqual({ ok: true });
    expect(gitAccepts(name)).toBe(true);
  });

  it.each(invalid.filter((name) => name.length <= 255))('refuses %s, like git', (name) => {
    expect(checkBranch(name).ok).toBe(false);
    expect(gitAccepts(name)).toBe(false);
  });

  it('refuses what git would read as an option, HEAD, empty and over-long names', () => {
    // git expands "@" to the current branch instead of refusing it.
    for (const name of ['-b', '--upload-pack=x', 'HEAD', '@', '', 'x'.repeat(256)])
      expect(checkBranch(name).ok).toBe(false);
  });
});
