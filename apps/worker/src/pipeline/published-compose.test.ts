import { parseCompose } from '@hostctl/compose';
import { describe, expect, it } from 'vitest';
import { NO_GROUPS } from '@hostctl/db';
import { publishedCompose } from './published-compose.js';

// A git/ai service shows the compose it runs, rendered from the plan, where interpolation put the
// variables' values: a secret's value must not be in it (docs/secrets.md#secret-variables).
describe('the compose a repository service publishes', () => {
  const document = `services:
  web:
    image: local/busybox:1
    environment:
      DATABASE_URL: postgres://app:\${DB_PASSWORD}@db/app
      MODE: \${MODE}
`;
  const variables = { DB_PASSWORD: 'planted-s3cret-value', MODE: 'production' };
  const plan = parseCompose(document, variables, {});

  it('masks secret values and keeps plain ones', () => {
    const text = publishedCompose(plan, {
      variables,
      secretNames: { DB_PASSWORD: '2026-11-28T00:00:00.000Z' },
      groups: NO_GROUPS,
    });
    expect(text).not.toContain('planted-s3cret-value');
    expect(text).toContain('postgres://app:***@db/app');
    expect(text).toContain('production');
  });

  it('is the plain rendering when nothing is secret', () => {
    expect(publishedCompose(plan, { variables, secretNames: {}, groups: NO_GROUPS })).toContain(
      'planted-s3cret-value',
    );
  });

  it("masks a variable group's secret values (docs/secrets.md#variable-groups)", () => {
    const groups = {
      variables: { DB_PASSWORD: 'group-s3cret-value' },
      secretValues: ['group-s3cret-value'],
      versions: [],
    };
    const fromGroup = parseCompose(document, { ...groups.variables, MODE: 'production' }, {});
    const text = publishedCompose(fromGroup, { variables: { MODE: 'production' }, secretNames: {}, groups });
    expect(text).not.toContain('group-s3cret-value');
    expect(text).toContain('postgres://app:***@db/app');
  });
});
