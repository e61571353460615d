import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_SECTIONS, renderConfigReference, renderEnvExample } from './reference.js';

const root = path.resolve(import.meta.dirname, '../../..');
const committed = (file: string) => readFileSync(path.join(root, file), 'utf8');

describe('configuration reference', () => {
  it('docs/configuration.md is what `pnpm docs:config` generates', () => {
    expect(committed('docs/configuration.md'), 'run `pnpm docs:config` and commit the result').toBe(
      renderConfigReference(),
    );
  });

  it('.env.example is what `pnpm docs:config` generates', () => {
    expect(committed('.env.example'), 'run `pnpm docs:config` and commit the result').toBe(
      renderEnvExample(),
    );
  });

  it('every variable has a description', () => {
    for (const section of CONFIG_SECTIONS) {
      for (const variable of section.variables) expect(variable.description, variable.name).not.toBe('');
    }
  });

  it('secrets have no default', () => {
    for (const section of CONFIG_SECTIONS) {
      for (const variable of section.variables.filter((v) => v.isSecret)) {
        expect(variable.defaultValue ?? '', variable.name).toBe('');
      }
    }
  });
});
