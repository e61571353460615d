import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { createDatabase, keyringFromEnvironment } from '@hostctl/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { E2E_DATABASE_URL, REDIS_URL } from './env.js';
import { ROOT } from './stack.js';

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

function runEntry(
  entry: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'test',
        DATABASE_URL: E2E_DATABASE_URL,
        REDIS_URL,
        QUEUE_PREFIX: `e2e-key-${randomUUID().slice(0, 8)}`,
        SESSION_SECRET: randomBytes(32).toString('hex'),
        API_PORT: '0',
        WORKER_HEALTH_PORT: '0',
        EGRESS_POLICY: 'off',
        LOG_LEVEL: 'fatal',
        ...env,
      },
      stdio: 'pipe',
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

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
