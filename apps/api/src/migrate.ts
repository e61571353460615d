// One-shot migration entry of the API image (`node apps/api/dist/migrate.mjs`): creates the
// database when missing and applies pending migrations. Reads DATABASE_URL or DATABASE_URL_FILE
// through loadConfig, so the production stack can keep the URL in a secret file.
import { CliConfigSchema, ConfigError, loadConfig } from '@hostctl/config';
import { ensureDatabase, migrate, MIGRATIONS_DIR } from '@hostctl/db';

let url: string;
try {
  url = loadConfig(CliConfigSchema).DATABASE_URL;
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(2);
}
await ensureDatabase(url);
console.log(JSON.stringify(await migrate(url, MIGRATIONS_DIR)));
