// `pnpm bench`: every benchmark of docs/performance.md, one after another, then one table.
// Optional: `pnpm bench --only=api,web,list,deploy,workers,fairness,release,runs,schedules,parse,secrets,series,tls,density`. Durations: see bench/lib/config.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { ensureDashboardBuilt } from '@hostctl/testing';
import { BENCH, ROOT } from './lib/config.js';
import {
  benchPool,
  createAdminWithKey,
  deleteServices,
  growServices,
  migrateBenchDatabase,
  resetData,
  resetRedis,
  seedCustomers,
} from './lib/data.js';
import { cleanupDocker } from './lib/docker.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorLines, LOG_DIR, loadAverage, rssMiB, stopAll } from './lib/proc.js';
import { printTable, row } from './lib/report.js';
import { apiUrl, prepareRuntime, runtimeName, startApi } from './lib/stack.js';
import { apiSuite } from './suites/api.js';
import { log, type BenchContext } from './suites/context.js';
import { deploySuite } from './suites/deploy.js';
import { fairnessSuite } from './suites/fairness.js';
import { listScalingSuite } from './suites/list-scaling.js';
import { parseSuite } from './suites/parse.js';
import { releaseSuite } from './suites/release.js';
import { runsSuite } from './suites/runs.js';
import { schedulesSuite } from './suites/schedules.js';
import { secretsSuite } from './suites/secrets.js';
import { seriesSuite } from './suites/series.js';
import { tlsSuite } from './suites/tls.js';
import { densitySuite } from './suites/density.js';
import { webSuite } from './suites/web.js';
import { workersSuite } from './suites/workers.js';

// web before list: list grows the table to 100k services, web measures the page at 10k.
const SUITES = [
  'api',
  'web',
  'list',
  'deploy',
  'workers',
  'fairness',
  'release',
  'runs',
  'schedules',
  'parse',
  'secrets',
  'series',
  'tls',
  'density',
] as const;
/** Suites that need no running API, Redis or Docker (secrets and series migrate the database themselves). */
const STANDALONE: readonly string[] = ['parse', 'secrets', 'series'];
const only = process.argv
  .find((arg) => arg.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const selected = SUITES.filter((suite) => !only || only.includes(suite));

const started = Date.now();
let interrupted = false;
process.once('SIGINT', () => {
  interrupted = true;
  console.error('\ninterrupted: stopping bench processes and removing bench containers');
  void stopAll()
    .then(() => cleanupDocker())
    .finally(() => process.exit(130));
});

const pool = benchPool();
const ctx: Partial<BenchContext> & Pick<BenchContext, 'rows' | 'notes'> = { pool, rows: [], notes: [] };
let exitCode = 0;

/** Database, Redis, Docker and a running API: what every suite but parse measures against. */
async function prepareStack(): Promise<void> {
  log(`database ${new URL(BENCH.databaseUrl).pathname.slice(1)}: migrating and resetting`);
  await migrateBenchDatabase();
  await resetData(pool);
  await resetRedis();
  await cleanupDocker();
  ctx.customerIds = (await seedCustomers(pool)).ids;
  const admin = await createAdminWithKey();
  ctx.userId = admin.userId;
  ctx.authorization = admin.authorization;
  await growServices(pool, 1000);
  await prepareRuntime();
  // The API serves apps/web/dist: built before it starts (a no-op when up to date).
  if (selected.includes('web')) ensureDashboardBuilt(ROOT);
  log(`starting the API (runtime: ${runtimeName()})`);
  ctx.api = await startApi();
  ctx.apiUrl = apiUrl();
  await sleep(2000);
  ctx.rows.push(
    row({
      section: 'memory',
      name: 'API RSS idle',
      baseline: null,
      figure: { value: rssMiB(ctx.api.pid), unit: 'MiB' },
    }),
  );
}

/** 1-minute load average when each suite started: other work on the machine lowers every figure. */
const loads: string[] = [`start ${loadAverage().toFixed(1)}`];
try {
  log(
    `bench: ${cpus().length} CPUs, load average ${loadAverage().toFixed(2)}, suites ${selected.join(', ')}`,
  );
  // parse is pure CPU and secrets needs only the database: alone, they need no API or Docker.
  if (selected.some((suite) => !STANDALONE.includes(suite))) await prepareStack();
  const full = ctx as BenchContext;

  const suites: [(typeof SUITES)[number], (c: BenchContext) => Promise<void>][] = [
    ['api', apiSuite],
    ['web', webSuite],
    ['list', listScalingSuite],
    ['deploy', deploySuite],
    ['workers', workersSuite],
    ['fairness', fairnessSuite],
    ['release', releaseSuite],
    ['runs', runsSuite],
    ['schedules', schedulesSuite],
    ['parse', parseSuite],
    ['secrets', secretsSuite],
    ['series', seriesSuite],
    ['tls', tlsSuite],
    ['density', densitySuite],
  ];
  for (const [name, suite] of suites) {
    if (!selected.includes(name)) continue;
    // The seeded rows are not real services: a worker's reconciler would try to repair them all.
    if (['deploy', 'workers', 'fairness', 'release', 'runs', 'schedules', 'tls', 'density'].includes(name))
      await deleteServices(pool);
    loads.push(`${name} ${loadAverage().toFixed(1)}`);
    await suite(full);
  }
  loads.push(`end ${loadAverage().toFixed(1)}`);
} catch (error) {
  exitCode = 1;
  console.error(`\nbench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  const errors = errorLines();
  console.error(
    errors.length > 0
      ? `\nerror lines of the bench's processes (whole output in ${path.relative(ROOT, LOG_DIR)}):\n${errors.join('\n')}`
      : `\nno error lines in the bench's processes' output (${path.relative(ROOT, LOG_DIR)})`,
  );
} finally {
  if (!interrupted) {
    await stopAll();
    const leftovers = await cleanupDocker();
    if (leftovers > 0) {
      ctx.notes.push(
        `cleanup: ${leftovers} Docker object(s) of the bench were still present at the end and were removed`,
      );
      exitCode = 1;
    }
    await pool.end();
  }
}

if (!interrupted) {
  console.log(
    `\nResults (${new Date().toISOString().slice(0, 16)}Z, ${cpus().length} CPUs, runtime ${runtimeName()}, ${Math.round((Date.now() - started) / 1000)} s; ` +
      `load average ${loads.join(', ')})\n`,
  );
  printTable(ctx.rows);
  for (const note of ctx.notes) console.log(`note: ${note}`);
  const dir = path.join(ROOT, '.data', 'bench');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `results-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        date: new Date().toISOString(),
        cpus: cpus().length,
        runtime: runtimeName(),
        loads,
        rows: ctx.rows,
        notes: ctx.notes,
      },
      null,
      2,
    ),
  );
  console.log(`\nraw results: ${path.relative(ROOT, file)}`);
  process.exit(exitCode);
}
