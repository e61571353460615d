// The API's types (packages/api-client) are generated from the API's OpenAPI document and
// committed, so a schema change breaks `pnpm typecheck` of the dashboard and the CLI. This fails
// when the committed file is stale: a route or schema changed without `pnpm api:client`.
import { describe, expect, it } from 'vitest';
import { command, ROOT } from './workspace-files.js';

describe('packages/api-client/src/schema.d.ts', () => {
  it('matches a fresh generation from the API document', async () => {
    const result = await command(ROOT, 'pnpm', ['-s', 'exec', 'tsx', 'scripts/gen-api-client.ts', '--check']);
    expect(result.output).toContain('matches');
    expect(result.code).toBe(0);
  });
});
