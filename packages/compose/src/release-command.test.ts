import { describe, expect, it } from 'vitest';
import { parseCompose } from './compose.parser.js';
import { renderCompose } from './compose.renderer.js';
import { problemsOf, withService } from './test-helpers.js';

// services.<name>.x-hostctl.release_command (docs/jobs.md#release-command).
describe('release command', () => {
  it('becomes the plan’s release, with its component and variables interpolated', () => {
    const plan = parseCompose(
      withService('    x-hostctl:\n      release_command: ["./migrate", "--to", "${VERSION}", "$$HOME"]'),
      { VERSION: '7' },
    );
    expect(plan.release).toEqual({ component: 'web', command: ['./migrate', '--to', '7', '$HOME'] });
  });

  it('survives a render and a parse (git/ai plans are stored rendered)', () => {
    const plan = parseCompose(
      withService('    x-hostctl:\n      release_command: ["sh", "-c", "echo $$X"]'),
      {},
    );
    expect(parseCompose(renderCompose(plan), {}).release).toEqual(plan.release);
  });

  it('is absent when no service declares one, and other x- keys stay ignored', () => {
    expect(parseCompose(withService('    x-notes: anything'), {}).release).toBeUndefined();
  });

  it.each([
    ['a shell string', '    x-hostctl:\n      release_command: "./migrate && ./seed"', 'list of strings'],
    ['an empty list', '    x-hostctl:\n      release_command: []', 'first element'],
    ['an empty program', '    x-hostctl:\n      release_command: [""]', 'first element'],
    ['a mapping', '    x-hostctl:\n      release_command: {cmd: x}', 'list of strings'],
  ])('refuses %s at its path', (_label, extra, message) => {
    expect(problemsOf(withService(extra))).toEqual([
      { path: 'services.web.x-hostctl.release_command', message: expect.stringContaining(message) },
    ]);
  });

  it('refuses an unknown hostctl setting and a non-mapping extension', () => {
    expect(problemsOf(withService('    x-hostctl:\n      cron: "* * * * *"'))).toEqual([
      { path: 'services.web.x-hostctl.cron', message: 'cron is not a hostctl setting' },
    ]);
    expect(problemsOf(withService('    x-hostctl: yes'))).toEqual([
      { path: 'services.web.x-hostctl', message: 'must be a mapping' },
    ]);
  });

  it('refuses a second service declaring one', () => {
    const text =
      'services:\n  web:\n    image: local/busybox:1\n    x-hostctl: {release_command: [a]}\n  jobs:\n    image: local/busybox:1\n    x-hostctl: {release_command: [b]}\n';
    expect(problemsOf(text)).toEqual([
      {
        path: 'services.jobs.x-hostctl.release_command',
        message: 'only one service may declare a release command; web already does',
      },
    ]);
  });
});
