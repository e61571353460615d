// Operator bootstrap commands: they write to the database directly (first customer, users, API
// keys), before any API key exists. Loaded only when one of them runs, so the API-client commands
// start without Prisma and the CLI image carries none of it.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliConfigSchema, ConfigError, loadConfig } from '@hostctl/config';
import { createBootstrapStore, createDb } from '@hostctl/db';
import { UsageError, type ParsedArgs } from './args.js';
import { createApiKey, createCustomer, createUser, type Command } from './commands/bootstrap.commands.js';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';

export { runSecretsCommand, SECRETS_COMMANDS } from './secrets-operator.js';

export const OPERATOR_COMMANDS: Record<string, Command> = {
  'customers create': createCustomer,
  'users create': createUser,
  'api-keys create': createApiKey,
};

type Env = Record<string, string | undefined>;

/** The repository's .data/env (written by scripts/setup-services.sh), three levels above this file. */
const REPO_ENV_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../.data/env');

/**
 * DATABASE_URL for the dev stack without `set -a; . .data/env`: when neither DATABASE_URL nor
 * DATABASE_URL_FILE is set, the value is read from the repository's .data/env. Only that one
 * variable is taken; the file's other settings (secrets among them) are not loaded.
 */
export function operatorEnv(env: Env, envFile: string = REPO_ENV_FILE): { env: Env; source?: string } {
  if (env.DATABASE_URL || env.DATABASE_URL_FILE || !existsSync(envFile)) return { env };
  const line = readFileSync(envFile, 'utf8')
    .split('\n')
    .find((candidate) => candidate.startsWith('DATABASE_URL='));
  const value = line?.slice('DATABASE_URL='.length).trim();
  return value ? { env: { ...env, DATABASE_URL: value }, source: envFile } : { env };
}

export async function runOperatorCommand(
  command: Command,
  args: ParsedArgs,
  io: { env: Env; out(text: string): void; err(text: string): void },
): Promise<ExitCode> {
  const { env, source } = operatorEnv(io.env);
  let config: { DATABASE_URL: string };
  try {
    config = loadConfig(CliConfigSchema, env);
  } catch (error) {
    if (error instanceof ConfigError)
      throw new CliError(
        `${error.message} (set DATABASE_URL, or run scripts/setup-services.sh for .data/env)`,
        EXIT.usage,
      );
    throw error;
  }
  if (source) io.err(`hostctl: DATABASE_URL from ${source}`);
  const db = createDb({ url: config.DATABASE_URL, max: 1 });
  try {
    const result = await command(createBootstrapStore(db), args);
    if (args.flags.get('json') === true) io.out(JSON.stringify(result));
    else for (const [key, value] of Object.entries(result)) io.out(`${key}: ${String(value)}`);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) throw new CliError(error.message, EXIT.usage);
    throw error;
  } finally {
    await db.$disconnect();
  }
}
