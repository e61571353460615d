// hostctl: operator CLI for bootstrapping an installation (customers, users, API keys).
// Usage: pnpm -s hostctl <resource> create [flags] [--json]
import { CliConfigSchema, ConfigError, loadConfig } from '@hostctl/config';
import { createBootstrapStore, createDb } from '@hostctl/db';
import { parseArgs, UsageError } from './args.js';
import { createApiKey, createCustomer, createUser, type Command } from './commands/bootstrap.commands.js';

const COMMANDS: Record<string, Command> = {
  'customers create': createCustomer,
  'users create': createUser,
  'api-keys create': createApiKey,
};

const USAGE = `usage:
  hostctl customers create --name NAME [--json]
  hostctl users create --email E --name N --role admin|operator|viewer [--customer ID] [--json]
  hostctl api-keys create --email E --name N [--expires-at RFC3339] [--json]`;

async function run(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  const command = COMMANDS[args.positional.slice(0, 2).join(' ')];
  if (!command) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig(CliConfigSchema);
  const db = createDb({ url: config.DATABASE_URL, max: 1 });
  try {
    const result = await command(createBootstrapStore(db), args);
    if (args.flags.has('json')) console.log(JSON.stringify(result));
    else for (const [key, value] of Object.entries(result)) console.log(`${key}: ${String(value)}`);
    return 0;
  } finally {
    await db.$disconnect();
  }
}

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError || error instanceof ConfigError) {
    console.error(`hostctl: ${error.message}`);
    process.exitCode = 2;
  } else {
    console.error(`hostctl: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}
