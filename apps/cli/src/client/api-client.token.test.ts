import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../test-support/fake-api.js';

/**
 * A token that cannot be an HTTP header value (a secret file with two lines, a pasted JSON answer,
 * a stray control character) made Node's fetch throw "Headers.append: "Bearer hsk_…" is an invalid
 * header value", and the CLI printed that message, token and all, into the CI log. Node's real
 * fetch: the port is closed, so nothing could answer anyway.
 */
const SECRET = 'hsk_Secret0123456789abcdefghijklmnop';
const URL_NOBODY_LISTENS = 'http://127.0.0.1:9';

describe('a malformed token', () => {
  const cases: [string, Record<string, string>][] = [
    ['with a line break inside (HOSTCTL_TOKEN)', { HOSTCTL_TOKEN: `${SECRET}\nsecond-line` }],
    ['with a NUL', { HOSTCTL_TOKEN: `${SECRET}\u0000` }],
    ['with a space inside', { HOSTCTL_TOKEN: `${SECRET} extra` }],
    ['with a non-ASCII character', { HOSTCTL_TOKEN: `${SECRET}é` }],
  ];
  const dir = mkdtempSync(path.join(tmpdir(), 'hostctl-token-'));
  const twoLines = path.join(dir, 'token');
  writeFileSync(twoLines, `${SECRET}\n# rotated 2026-11-23\n`, { mode: 0o600 });
  cases.push(['from a secret file of two lines (HOSTCTL_TOKEN_FILE)', { HOSTCTL_TOKEN_FILE: twoLines }]);

  for (const [name, env] of cases) {
    it(`${name}: exit 2 naming the problem, and the token is never printed`, async () => {
      const result = await run(['services', 'list'], fetch, { HOSTCTL_URL: URL_NOBODY_LISTENS, ...env });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('is not an API key');
      expect(`${result.stdout}${result.stderr}`).not.toContain(SECRET.slice(4, 20));
    });
  }
});
