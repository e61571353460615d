// `pnpm db:migrate`: creates the database when missing, then applies pending migrations.
import { ensureDatabase, migrate, MIGRATIONS_DIR } from './migrator.js';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('DATABASE_URL is required');
  process.exit(2);
}
await ensureDatabase(url);
console.log(JSON.stringify(await migrate(url, MIGRATIONS_DIR)));
