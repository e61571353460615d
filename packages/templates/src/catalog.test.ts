import { parseCompose } from '@hostctl/compose';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from './catalog.js';
import { resolveTemplateVariables } from './resolve.js';

const catalog = loadCatalog();

describe('the shipped catalog', () => {
  it('has the production entries', () => {
    expect([...catalog.keys()]).toEqual(
      expect.arrayContaining(['static-site', 'postgres', 'redis', 'mariadb', 'nginx', 'wordpress', 'ghost']),
    );
  });

  it.each([...catalog.values()].map((t) => [t.id, t] as const))(
    '%s validates against the compose policy',
    (_id, template) => {
      const given = Object.fromEntries(
        template.variables
          .filter((v) => v.required && v.default === undefined)
          .map((v) => [v.name, 'https://example.test']),
      );
      const plan = parseCompose(template.compose, resolveTemplateVariables(template, given));
      expect(plan.containers.length).toBeGreaterThan(0);
    },
  );
});

describe('resolveTemplateVariables', () => {
  const postgres = catalog.get('postgres')!;

  it('fills defaults and generates secrets, different each time', () => {
    const a = resolveTemplateVariables(postgres, {});
    const b = resolveTemplateVariables(postgres, {});
    expect(a.POSTGRES_USER).toBe('app');
    expect(a.POSTGRES_PASSWORD).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(a.POSTGRES_PASSWORD).not.toBe(b.POSTGRES_PASSWORD);
  });

  it('keeps given values', () => {
    expect(resolveTemplateVariables(postgres, { POSTGRES_USER: 'shop' }).POSTGRES_USER).toBe('shop');
  });

  it('names a value that breaks the pattern, an unknown variable and a missing required one', () => {
    const ghost = catalog.get('ghost')!;
    expect(() => resolveTemplateVariables(ghost, {})).toThrow(/SITE_URL is required/);
    expect(() => resolveTemplateVariables(postgres, { POSTGRES_USER: 'Bad User' })).toThrow(
      /POSTGRES_USER must match/,
    );
    expect(() => resolveTemplateVariables(postgres, { NOPE: 'x' })).toThrow(/NOPE is not a variable/);
  });
});
