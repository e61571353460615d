import { randomUUID } from 'node:crypto';
import { createDb } from '@hostctl/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseArgs } from '../args.js';
import { CliError, EXIT } from '../exit-codes.js';
import { runOperatorCommand } from '../operator.js';
import { createApiKey } from './bootstrap.commands.js';

/**
 * Issue 27, class 10: `hostctl api-keys create --service/--customer/--actions` mints a deploy
 * token from the operator CLI, against the real database (TEST_DATABASE_URL, migrated), with the
 * API's rules: limits never exceed the owner, usage errors exit with the usage code (docs/ci.md).
 */
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/hostctl_test';
const db = createDb({ url: DATABASE_URL, max: 1 });
const suffix = randomUUID().slice(0, 8);
let customerA: string;
let customerB: string;
let serviceA: string;
const email = (role: string) => `${role}-${suffix}@cli-keys.example.test`;

async function insertCustomer(name: string): Promise<string> {
  return (await db.customer.create({ data: { name } })).id;
}

beforeAll(async () => {
  customerA = await insertCustomer(`cli-keys-a-${suffix}`);
  customerB = await insertCustomer(`cli-keys-b-${suffix}`);
  const service = await db.service.create({
    data: {
      name: `cli-keys-${suffix}`,
      customerId: customerA,
      status: 'running',
      deployMethod: 'compose',
      url: 'http://cli-keys.test',
    },
  });
  serviceA = service.id;
  for (const role of ['operator', 'viewer'] as const) {
    await db.user.create({ data: { email: email(role), name: role, role, customerId: customerA } });
  }
});
afterAll(async () => db.$disconnect());

async function create(...argv: string[]) {
  const out: string[] = [];
  const code = await runOperatorCommand(createApiKey, parseArgs(['--json', ...argv]), {
    env: { DATABASE_URL },
    out: (text) => out.push(text),
    err: () => undefined,
  });
  return { code, result: JSON.parse(out.join('')) as Record<string, unknown> };
}
async function usageError(...argv: string[]): Promise<string> {
  const error = await create(...argv).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(CliError);
  expect((error as CliError).exitCode).toBe(EXIT.usage);
  return (error as CliError).message;
}

describe('hostctl api-keys create with limits', () => {
  it('--service and --actions: a deploy token of that service, with its customer', async () => {
    const { code, result } = await create(
      ...['--email', email('operator'), '--name', 'ci', '--service', serviceA, '--actions', 'read,deploy'],
    );
    expect(code).toBe(EXIT.ok);
    expect(result).toMatchObject({ service_id: serviceA, customer_id: customerA, actions: 'read,deploy' });
    const row = await db.apiKey.findUniqueOrThrow({ where: { id: String(result.id) } });
    expect(row).toMatchObject({ serviceId: serviceA, customerId: customerA, actions: ['read', 'deploy'] });
  });

  it('--customer: a key limited to the customer', async () => {
    const { result } = await create('--email', email('operator'), '--name', 'ci', '--customer', customerA);
    expect(result).toMatchObject({ service_id: null, customer_id: customerA, actions: null });
  });

  it('refuses limits beyond the owner, and malformed ones, with the usage exit code', async () => {
    const base = ['--email', email('operator'), '--name', 'ci'];
    expect(await usageError(...base, '--customer', customerB)).toMatch(/key owner's customer/);
    expect(await usageError(...base, '--service', randomUUID())).toMatch(/no live service/);
    expect(await usageError(...base, '--service', serviceA, '--customer', customerA)).toMatch(/not both/);
    expect(await usageError(...base, '--actions', 'read,admin')).toMatch(/comma-separated list/);
    expect(await usageError(...base, '--actions', 'read,read')).toMatch(/twice/);
    expect(await usageError('--email', email('viewer'), '--name', 'ci', '--actions', 'deploy')).toMatch(
      /role viewer\) may not deploy/,
    );
  });
});
