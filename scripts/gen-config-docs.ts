// Writes docs/configuration.md and .env.example from the env schemas (pnpm docs:config).
// packages/config/src/reference.test.ts fails when the committed files differ from this output.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderConfigReference, renderEnvExample } from '../packages/config/src/reference.ts';

const root = path.resolve(import.meta.dirname, '..');
writeFileSync(path.join(root, 'docs/configuration.md'), renderConfigReference());
writeFileSync(path.join(root, '.env.example'), renderEnvExample());
console.log('wrote docs/configuration.md and .env.example');
