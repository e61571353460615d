import { describe, expect, it } from 'vitest';
import { parseCompose } from './compose.parser.js';
import { renderCompose } from './compose.renderer.js';
import { problemsOf, withService } from './test-helpers.js';

// services.<name>.x-hostctl.backup (docs/backups.md#hooks).
const hooks = (body: string) => withService(`    x-hostctl:\n      backup:\n${body}`);
const AT = 'services.web.x-hostctl.backup';

describe('backup hooks', () => {
  it('land on their component with variables interpolated and the default timeout', () => {
    const plan = parseCompose(
      hooks('        pre: [pg_dump, -U, "${USER}", -f, /data/dump]\n        post: [rm, -f, /data/dump]'),
      { USER: 'app' },
    );
    expect(plan.containers[0]!.backupHooks).toEqual({
      pre: ['pg_dump', '-U', 'app', '-f', '/data/dump'],
      post: ['rm', '-f', '/data/dump'],
      timeoutSeconds: 300,
    });
  });

  it('take a timeout and sit beside a release command', () => {
    const plan = parseCompose(
      withService(
        '    x-hostctl:\n      release_command: [./migrate]\n      backup: {post: [sync], timeout_seconds: 5}',
      ),
      {},
    );
    expect(plan.containers[0]!.backupHooks).toEqual({ post: ['sync'], timeoutSeconds: 5 });
    expect(plan.release).toEqual({ component: 'web', command: ['./migrate'] });
  });

  it('survive a render and a parse, beside a release command and with a $ kept', () => {
    const plan = parseCompose(
      withService(
        '    x-hostctl:\n      release_command: [./migrate]\n      backup: {pre: [sh, -c, "dump > $$HOME/x"], timeout_seconds: 60}',
      ),
      {},
    );
    const again = parseCompose(renderCompose(plan), {});
    expect(again.containers[0]!.backupHooks).toEqual({
      pre: ['sh', '-c', 'dump > $HOME/x'],
      timeoutSeconds: 60,
    });
    expect(again.release).toEqual(plan.release);
  });

  it('take a verify command alone, through a render and a parse (docs/backups.md#verification)', () => {
    const plan = parseCompose(
      hooks('        verify: [sh, -c, "grep -q ok $$DATA/state"]\n        timeout_seconds: 20'),
      {},
    );
    const again = parseCompose(renderCompose(plan), {});
    expect(again.containers[0]!.backupHooks).toEqual({
      verify: ['sh', '-c', 'grep -q ok $DATA/state'],
      timeoutSeconds: 20,
    });
  });

  it('are absent when nothing declares them', () => {
    expect(
      parseCompose(withService('    x-hostctl: {release_command: [a]}'), {}).containers[0]!.backupHooks,
    ).toBeUndefined();
  });

  it.each([
    ['an empty argv', '        pre: []', `${AT}.pre`, 'first element'],
    ['an empty program', '        post: [""]', `${AT}.post`, 'first element'],
    ['a shell string', '        pre: "pg_dump > /data/x"', `${AT}.pre`, 'list of strings'],
    [
      'too many arguments',
      `        pre: [${Array.from({ length: 257 }, () => 'a').join(', ')}]`,
      `${AT}.pre`,
      'at most 256',
    ],
    ['a too long argument', `        pre: [echo, ${'x'.repeat(8193)}]`, `${AT}.pre`, 'at most 256'],
    [
      'a zero timeout',
      '        pre: [a]\n        timeout_seconds: 0',
      `${AT}.timeout_seconds`,
      'from 1 to 3600',
    ],
    [
      'a timeout over an hour',
      '        pre: [a]\n        timeout_seconds: 3601',
      `${AT}.timeout_seconds`,
      'from 1 to 3600',
    ],
    [
      'a fractional timeout',
      '        pre: [a]\n        timeout_seconds: 1.5',
      `${AT}.timeout_seconds`,
      'from 1 to 3600',
    ],
    [
      'a timeout as text',
      '        pre: [a]\n        timeout_seconds: "30"',
      `${AT}.timeout_seconds`,
      'from 1 to 3600',
    ],
    ['no hook at all', '        timeout_seconds: 30', AT, 'a pre, a post or a verify command'],
    ['an unknown key', '        pre: [a]\n        check: [b]', `${AT}.check`, 'not a backup setting'],
    ['an empty verify command', '        verify: []', `${AT}.verify`, 'first element'],
  ])('refuse %s at its path', (_label, body, path, message) => {
    expect(problemsOf(hooks(body))).toEqual([{ path, message: expect.stringContaining(message) }]);
  });

  it('refuse a non-mapping', () => {
    expect(problemsOf(withService('    x-hostctl:\n      backup: [pg_dump]'))).toEqual([
      { path: AT, message: expect.stringContaining('must be a mapping') },
    ]);
  });
});
