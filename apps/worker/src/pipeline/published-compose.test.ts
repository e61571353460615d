import { parseCompose } from '@hostctl/compose';
import { describe, expect, it } from 'vitest';
import { NO_GROUPS } from '@hostctl/db';
import { publishedCompose } from './published-compose.js';

// A git/ai service shows the compose it runs, rendered from the plan, where interpolation put the
// variables' values. Variables are sealed at rest (docs/secrets.md#what-is-encrypted), and this
// text is stored on the service and on every release: no variable's value may be in it in the clear.
describe('the compose a repository service publishes', () => {
  const document = `services:
  web:
    image: local/busybox:1
    environment:
      DATABASE_URL: postgres://app:\${DB_PASSWORD}@db/app
      MODE: \${MODE}
      PRICE: "costs $$5"
`;
  const variables = { DB_PASSWORD: 'planted-s3cret-value', MODE: 'planted-plain-mode' };
  const plan = parseCompose(document, variables, {});
  const SECRET = { DB_PASSWORD: '2026-11-28T00:00:00.000Z' };

  it('refers to a variable by name where the entry is exactly that variable, and masks the rest', () => {
    const text = publishedCompose(plan, { variables, secretNames: SECRET, groups: NO_GROUPS });
    expect(text).not.toContain('planted-s3cret-value');
    expect(text).not.toContain('planted-plain-mode');
    expect(text).toContain('postgres://app:***@db/app');
    expect(text).toMatch(/MODE: \$\{MODE\}/);
    // A literal dollar is still written as compose escapes it.
    expect(text).toContain('costs $$5');
  });

  it('keeps a plain value out too, and reads back as the same environment with the variables', () => {
    const text = publishedCompose(plan, { variables, secretNames: {}, groups: NO_GROUPS });
    expect(text).not.toContain('planted-s3cret-value');
    expect(text).not.toContain('planted-plain-mode');
    const again = parseCompose(text, variables, {});
    expect(again.containers[0]!.environment).toMatchObject({ MODE: 'planted-plain-mode', PRICE: 'costs $5' });
  });

  it("masks a variable group's values, its secrets anywhere (docs/secrets.md#variable-groups)", () => {
    const groups = {
      variables: { DB_PASSWORD: 'group-s3cret-value' },
      secretValues: ['group-s3cret-value'],
      versions: [],
    };
    const withCommand = `${document}    command: ["sh", "-c", "login \${DB_PASSWORD}"]\n`;
    const fromGroup = parseCompose(withCommand, { ...groups.variables, MODE: 'production' }, {});
    const text = publishedCompose(fromGroup, { variables: { MODE: 'production' }, secretNames: {}, groups });
    expect(text).not.toContain('group-s3cret-value');
    expect(text).toContain('postgres://app:***@db/app');
    expect(text).toContain('login ***');
  });
});
