// The dashboard's API types are generated from the API's OpenAPI document and committed, so a
// schema change breaks `pnpm typecheck` of apps/web. This fails when the committed file is stale:
// a route or schema changed without `pnpm web:client`.
import { describe, expect, it } from 'vitest';
import { command, ROOT } from './fresh-copy.js';

describe('apps/web/src/api/schema.d.ts', () => {
  it('matches a fresh generation from the API document', async () => {
    const result = await command(ROOT, 'pnpm', ['-s', 'exec', 'tsx', 'scripts/gen-web-client.ts', '--check']);
    expect(result.output).toContain('matches');
    expect(result.code).toBe(0);
  });
});
