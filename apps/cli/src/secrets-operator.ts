// `hostctl secrets rotate|seal|verify`: the operator's upkeep of what is sealed at rest
// (docs/secrets.md). Like the bootstrap commands they talk to the database directly, and they
// need the key-encryption keys: SECRETS_KEK (or SECRETS_KEK_FILE), SECRETS_KEK_ID and, during a
// rotation, SECRETS_KEK_RETIRED. Each is online and safe to run again.
import { ConfigError, loadConfig, SecretsCliConfigSchema } from '@hostctl/config';
import {
  createDatabase,
  keyringFromSettings,
  rewrapDataKeys,
  sealPlaintextRows,
  SecretsKeyError,
  type Database,
  type SealReport,
} from '@hostctl/db';
import type { ParsedArgs } from './args.js';
import { CliError, EXIT, type ExitCode } from './exit-codes.js';

type SecretsCommand = (database: Database) => Promise<Record<string, unknown>>;

export const SECRETS_COMMANDS: Record<string, SecretsCommand> = {
  /**
   * Re-wraps every data key under SECRETS_KEK; the old key (in SECRETS_KEK_RETIRED) reads until it
   * is done. Then seals anything still plain, and checks that the current key alone opens them all.
   */
  'secrets rotate': async ({ db, vault }) => {
    await vault.verify();
    const rewrap = await rewrapDataKeys(db, vault.keys);
    const sealed = await sealPlaintextRows(db);
    return {
      kek_id: rewrap.kekId,
      rewrapped: rewrap.rewrapped,
      already_current: rewrap.current,
      ...sealedOf(sealed),
    };
  },
  /** Seals variables stored before encryption existed (the worker also does it at start). */
  'secrets seal': async ({ db, vault }) => {
    await vault.verify();
    return sealedOf(await sealPlaintextRows(db));
  },
  /** Fails (exit 2) with the reason when the configured keys do not open every data key. */
  'secrets verify': async ({ vault }) => {
    await vault.verify();
    return { ok: true, kek_id: vault.keys.currentId };
  },
};

const sealedOf = (report: SealReport) => ({
  sealed_services: report.services,
  sealed_deployments: report.deployments,
  sealed_certificates: report.certificates,
});

export async function runSecretsCommand(
  command: SecretsCommand,
  args: ParsedArgs,
  io: { env: Record<string, string | undefined>; out(text: string): void },
): Promise<ExitCode> {
  let database: Database;
  try {
    const config = loadConfig(SecretsCliConfigSchema, io.env);
    database = createDatabase({ url: config.DATABASE_URL, max: 2, keys: keyringFromSettings(config) });
  } catch (error) {
    if (error instanceof ConfigError || error instanceof SecretsKeyError)
      throw new CliError(error.message, EXIT.usage);
    throw error;
  }
  try {
    const result = await command(database);
    if (args.flags.get('json') === true) io.out(JSON.stringify(result));
    else for (const [key, value] of Object.entries(result)) io.out(`${key}: ${String(value)}`);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof SecretsKeyError) throw new CliError(error.message, EXIT.usage);
    throw error;
  } finally {
    await database.db.$disconnect();
  }
}
