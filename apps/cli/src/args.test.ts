import { describe, expect, it } from 'vitest';
import { assertKnownFlags, integerFlag, operands, parseArgs, UsageError } from './args.js';
import { isFinalDeployment as isFinalStatus } from '@hostctl/domain';
import { exitCodeForStatus } from './exit-codes.js';
import { exitCodeForHttpStatus } from './client/api-client.js';

describe('parseArgs', () => {
  it('does not let a boolean flag swallow the next word', () => {
    const args = parseArgs(['deploy', '--wait', 'web', '--timeout', '60', '--json']);
    expect(args.positional).toEqual(['deploy', 'web']);
    expect(args.flags.get('wait')).toBe(true);
    expect(args.flags.get('timeout')).toBe('60');
    expect(args.flags.get('json')).toBe(true);
  });

  it('reads --name=value, keeps every value of a repeated flag, and stops at --', () => {
    const args = parseArgs([
      'services',
      'create',
      '--name=web',
      '--var',
      'A=1',
      '--var',
      'B=x=y',
      '--',
      '--odd',
    ]);
    expect(args.flags.get('name')).toBe('web');
    expect(args.repeated.get('var')).toEqual(['A=1', 'B=x=y']);
    expect(args.positional).toEqual(['services', 'create', '--odd']);
  });

  it('refuses a value on a boolean flag', () => {
    expect(() => parseArgs(['deploy', 'web', '--wait=yes'])).toThrow(UsageError);
  });

  it('keeps the operator commands parsing as before', () => {
    const args = parseArgs(['users', 'create', '--email', 'a@b.test', '--role', 'viewer', '--json']);
    expect(args.positional).toEqual(['users', 'create']);
    expect(args.flags.get('email')).toBe('a@b.test');
  });
});

describe('flag helpers', () => {
  it.each([
    ['60', 60],
    ['0', 0],
  ])('--timeout %s is %d', (raw, value) => {
    expect(integerFlag(parseArgs(['--timeout', raw]), 'timeout')).toBe(value);
  });

  it.each(['-5', '1.5', 'soon', '100001'])('--timeout %s is a usage error', (raw) => {
    expect(() => integerFlag(parseArgs([`--timeout=${raw}`]), 'timeout', 100_000)).toThrow(UsageError);
  });

  it('names unknown options and missing or extra operands', () => {
    expect(() => assertKnownFlags(parseArgs(['--wiat']), ['wait'])).toThrow('unknown option --wiat');
    expect(() => operands(parseArgs(['deploy']), 1, ['SERVICE'])).toThrow('missing SERVICE');
    expect(() => operands(parseArgs(['deploy', 'a', 'b']), 1, ['SERVICE'])).toThrow(
      'unexpected argument "b"',
    );
  });
});

describe('exit codes', () => {
  it.each([
    ['succeeded', 0],
    ['failed', 1],
    ['cancelled', 4],
    ['superseded', 4],
    ['rolled_back', 4],
    ['something_new', 1],
  ])('a deployment %s exits %d', (status, code) => {
    expect(exitCodeForStatus(status)).toBe(code);
  });

  it('knows which statuses are final', () => {
    expect(['queued', 'running'].map(isFinalStatus)).toEqual([false, false]);
    expect(['succeeded', 'failed', 'cancelled', 'superseded', 'rolled_back'].every(isFinalStatus)).toBe(true);
  });

  it.each([
    [401, 5],
    [403, 5],
    [404, 1],
    [409, 1],
    [500, 1],
  ])('HTTP %d exits %d', (status, code) => {
    expect(exitCodeForHttpStatus(status)).toBe(code);
  });
});
