// test-all.sh: every shared test database starts each run empty and migrated. A run must not
// depend on rows an earlier run left, nor on data keys wrapped by a key-encryption key this
// checkout no longer has (a fresh clone once failed 51 tests on exactly that). Each suite's
// default database is listed here; the *_DATABASE_URL variables override them as in the suites.
import { migrate, MIGRATIONS_DIR, recreateDatabase } from '../packages/db/src/migrator.ts';

const server = 'postgresql://postgres@127.0.0.1:5432';
const env = process.env;
const databases = [
  env.TEST_DATABASE_URL ?? `${server}/hostctl_test`,
  env.WORKER_TEST_DATABASE_URL ?? `${server}/hostctl_worker_test`,
  env.WORKER_LOGIC_TEST_DATABASE_URL ?? `${server}/hostctl_worker_logic_test`,
  env.WEB_DATABASE_URL ?? `${server}/hostctl_web_test`,
  ...(env.E2E_DATABASE_URL
    ? [env.E2E_DATABASE_URL]
    : [`${server}/hostctl_e2e_test`, `${server}/hostctl_e2e_swarm_test`]),
];

for (const url of new Set(databases)) {
  await recreateDatabase(url);
  const { applied } = await migrate(url, MIGRATIONS_DIR);
  console.log(`${new URL(url).pathname.slice(1)}: recreated, ${applied.length} migrations applied`);
}
