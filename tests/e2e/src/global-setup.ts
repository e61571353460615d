import { ensureDatabase, migrate, MIGRATIONS_DIR } from '@hostctl/db';
import { E2E_DATABASE_URL } from './env.js';

export default async function setup(): Promise<void> {
  await ensureDatabase(E2E_DATABASE_URL);
  await migrate(E2E_DATABASE_URL, MIGRATIONS_DIR);
}
