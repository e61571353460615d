// Generates the Prisma client offline (`pnpm db:generate`, also run after every `pnpm install`).
// `prisma generate` needs no schema engine, but the CLI downloads one unless
// PRISMA_SCHEMA_ENGINE_BINARY names an existing file, and nothing outside the npm registry is
// reachable here: point it at the schema itself, which is never executed.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const schema = path.join(root, 'prisma/schema.prisma');
const prisma = path.join(root, 'node_modules/.bin/prisma');
if (!existsSync(prisma)) {
  console.error('prisma-generate: node_modules/.bin/prisma is missing; run pnpm install first');
  process.exit(1);
}
const result = spawnSync(prisma, ['generate', '--schema', schema], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? schema,
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    CHECKPOINT_DISABLE: '1',
  },
});
process.exit(result.status ?? 1);
