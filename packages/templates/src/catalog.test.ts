import { parseCompose } from '@hostctl/compose';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from './catalog.js';
import { resolveTemplateVariables, secretVariableNames } from './resolve.js';

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

describe('backup hooks of the database templates (docs/backups.md#hooks)', () => {
  // Every component running a database dumps it into its own volume before a backup and removes
  // the dump after; the dump's file is in the volume the snapshot copies.
  it.each([
    ['postgres', 'db', '/var/lib/postgresql/data', 'pg_dump'],
    ['mariadb', 'db', '/var/lib/mysql', 'mariadb-dump'],
    ['wordpress', 'db', '/var/lib/mysql', 'mariadb-dump'],
  ])('%s dumps %s into %s', (id, component, mount, dumper) => {
    const template = catalog.get(id)!;
    const variables = resolveTemplateVariables(template, {});
    const container = parseCompose(template.compose, variables).containers.find(
      (item) => item.name === component,
    )!;
    const hooks = container.backupHooks!;
    expect(hooks.pre!.join(' ')).toContain(dumper);
    expect(hooks.pre!.join(' ')).toContain(`${mount}/hostctl-backup.`);
    expect(hooks.post).toEqual([
      'rm',
      '-f',
      expect.stringMatching(new RegExp(`^${mount}/hostctl-backup\\.`)),
    ]);
    expect(container.volumes.map((volume) => volume.target)).toContain(mount);
    // No secret is written into the argv: the password stays in the container's environment.
    for (const [name, value] of Object.entries(variables))
      if (/PASSWORD/.test(name)) expect(hooks.pre!.join(' ')).not.toContain(value);
  });
});

describe('secretVariableNames', () => {
  it('names every password and key, generated or declared secret, and nothing else', () => {
    const names = Object.fromEntries([...catalog.values()].map((t) => [t.id, secretVariableNames(t)]));
    expect(names).toMatchObject({
      postgres: ['POSTGRES_PASSWORD'],
      mariadb: ['MARIADB_PASSWORD', 'MARIADB_ROOT_PASSWORD'],
      redis: ['REDIS_PASSWORD'],
      wordpress: ['DB_PASSWORD', 'DB_ROOT_PASSWORD'],
      n8n: ['N8N_ENCRYPTION_KEY'],
      ghost: [],
      'static-site': [],
    });
  });
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
