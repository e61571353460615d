import { randomBytes, randomUUID } from 'node:crypto';
import { createDatabase, keyringFromEnvironment } from '@hostctl/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEntry } from './entry-process.js';
import { E2E_DATABASE_URL } from './env.js';

/**
 * Issue 30: the api and the worker, started as production starts them, refuse to run with a key
 * that does not open the data keys at rest, and say why (exit 2), rather than serving empty
 * variables. The database has at least one data key wrapped with the stack's key (made here).
 */
const database = createDatabase({ url: E2E_DATABASE_URL, max: 1, keys: keyringFromEnvironment(process.env) });

beforeAll(async () => {
  const customer = await database.db.customer.create({ data: { name: `key-start-${randomUUID()}` } });
  await database.db.service.create({
    data: {
      name: `key-start-${randomUUID().slice(0, 8)}`,
      customerId: customer.id,
      status: 'stopped',
      deployMethod: 'compose',
      variables: { TOKEN: 'sealed' },
      url: 'http://key-start.test',
    },
  });
});
afterAll(async () => database.db.$disconnect());

const wrongKey = {
  SECRETS_KEK: randomBytes(32).toString('base64'),
  SECRETS_KEK_ID: process.env.SECRETS_KEK_ID ?? 'k1',
};

describe('a process started with the wrong key', { timeout: 180_000 }, () => {
  it('the api refuses with the reason', async () => {
    const { code, output } = await runEntry('apps/api/src/main.ts', wrongKey);
    expect(code).toBe(2);
    expect(output).toMatch(/does not open the data key of .*the configured key is wrong/);
  });

  it('the worker refuses with the reason', async () => {
    const { code, output } = await runEntry('apps/worker/src/main.ts', wrongKey);
    expect(code).toBe(2);
    expect(output).toMatch(/does not open the data key of .*the configured key is wrong/);
  });

  it('an unknown key id is named', async () => {
    const { code, output } = await runEntry('apps/api/src/main.ts', {
      SECRETS_KEK: randomBytes(32).toString('base64'),
      SECRETS_KEK_ID: 'never-configured',
    });
    expect(code).toBe(2);
    expect(output).toMatch(/which is not configured/);
  });
});
