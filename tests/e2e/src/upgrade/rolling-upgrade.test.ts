import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { recreateDatabase } from '@hostctl/db';
import { isFinalDeployment } from '@hostctl/domain';
import { apiClient, appBundles } from '@hostctl/testing';
import { isGood, requireCaddy, startTraffic, tally, viaCaddy } from '../caddy-traffic.js';
import { eventually } from '../client.js';
import { E2E_DATABASE_URL } from '../env.js';
import {
  createReleaseService,
  operatorApi,
  release,
  settledStatus,
  waitDeployment,
  type Api,
} from '../release-fixtures.js';
import { ROOT, startStack, type Stack } from '../stack.js';
import { startApiTraffic } from './api-traffic.js';
import { previousReleaseBundles, previousReleaseCommit, resolveCommit } from './previous-release.js';

/**
 * Issue 29, item 5: an operator upgrades hostctl without downtime (docs/operations.md#upgrading).
 * The previous release (tests/e2e/previous-release, built from git) runs an API and two workers
 * on a database its own migrations made, and deploys services. Then, with visitors' traffic
 * through Caddy, API requests spread over every live API replica and deploy jobs in flight, the
 * current commit's migrations are applied under the running old processes, the current API and a
 * current worker start, each old worker is stopped (SIGTERM: it drains) and replaced one by one,
 * and the old API is taken out of rotation and stopped last. Nothing a visitor or an API client
 * sent may fail, every deployment ends succeeded, every service running.
 */
const SERVICES = 3;
// A cold build of the previous release (install from the pnpm store + bundles) takes seconds on a
// quiet machine; the ceiling is for a loaded one that installs from the registry.
const BUILD_TIMEOUT_MS = 600_000;
const ROLLOUT_TIMEOUT_MS = 600_000;
const DATABASE_URL =
  process.env.UPGRADE_DATABASE_URL ?? E2E_DATABASE_URL.replace(/\/([^/?]+)(\?|$)/, '/$1_upgrade$2');

const runNode = promisify(execFile);

/** A release's one-shot migration entry (the API image's `migrate.mjs`) against the test's database. */
async function migrateWith(bundles: string): Promise<string[]> {
  const entry = appBundles(bundles)
    .entryOf('apps/api/src/main.ts')
    .replace(/main\.mjs$/, 'migrate.mjs');
  const { stdout } = await runNode(process.execPath, [entry], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL },
  });
  return (JSON.parse(stdout.trim().split('\n').at(-1)!) as { applied: string[] }).applied;
}

/** How many of these deployments are not final yet. */
async function unfinished(client: Api, ids: string[]): Promise<number> {
  const statuses = await Promise.all(
    ids.map(async (id) => (await client.get<{ status: string }>(`/api/deployments/${id}`)).body.status),
  );
  return statuses.filter((status) => !isFinalDeployment(status)).length;
}

/** SIGTERM, as a supervisor stops a replica, and wait for the process to have drained and exited. */
function stopGracefully(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

let previous: Stack | undefined;
let current: Stack | undefined;
let previousBundles: string;
let api: Api;
let customerId: string;
let key: string;
const services: { id: string; host: string }[] = [];
/** Created through the old API just before the first old worker stops: its deploy is in flight. */
let late: { id: string; host: string; deploymentId: string } | undefined;

beforeAll(async () => {
  requireCaddy();
  const commit = await resolveCommit(ROOT, await previousReleaseCommit(ROOT));
  previousBundles = await previousReleaseBundles(ROOT, commit, (line) => console.log(`[upgrade] ${line}`));
  await recreateDatabase(DATABASE_URL);
  const applied = await migrateWith(previousBundles);
  console.log(`[upgrade] previous release ${commit.slice(0, 10)}: ${applied.length} migrations applied`);
  previous = await startStack({ bundles: previousBundles, workers: 2, extraEnv: { DATABASE_URL } });
  ({ api, customerId, key } = await operatorApi(previous, 'upgrade'));
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  // Through whichever API is still running: the current one once it has started.
  const client = current ? apiClient(current.apiUrl, key) : previous ? api : undefined;
  for (const service of [...services, ...(late ? [late] : [])])
    await client?.delete(`/api/services/${service.id}`).catch(() => {});
  // The previous stack's processes only: the current one removes the installation's containers.
  await previous?.stop({ keepServices: current !== undefined });
  await current?.stop();
});

describe('a rolling upgrade from the previous release to this commit', () => {
  it('the previous release deploys services that Caddy serves', async () => {
    for (let i = 0; i < SERVICES; i++) {
      const created = await createReleaseService(api, customerId, `upg${i}`, { VERSION: '0' });
      services.push({ id: created.id, host: created.host });
      expect((await waitDeployment(api, created.deploymentId)).status).toBe('succeeded');
    }
    for (const { host } of services) {
      const answer = await eventually(() => viaCaddy(host), isGood);
      expect(answer.body).toBe('release-0');
    }
  });

  it(
    'rolls workers then the API one by one with traffic and deploys in flight: nothing fails',
    async () => {
      const old = previous!;
      const visitors = services.map(({ host }) => startTraffic(host, 1));
      const apiTraffic = startApiTraffic(key, [old.apiUrl]);
      const seen = () => tally(visitors.flatMap((traffic) => traffic.answers));
      const deployments: string[] = [];
      let migrated: string[] = [];
      // How long each step took, printed with the totals: where a slow rollout spends its time.
      const steps: string[] = [];
      let since = Date.now();
      const step = (label: string) => {
        steps.push(`${label} ${Date.now() - since} ms`);
        since = Date.now();
      };
      try {
        // Jobs in flight: the old workers take these while the rollout goes on.
        for (const { id } of services) deployments.push(await release(api, id, { VERSION: '1' }));

        // 1. Expand: the current commit's migrations, under the running previous release.
        const bundles = inject('bundles');
        migrated = await migrateWith(bundles);
        step('migrate');

        // 2. The current API and a first current worker join the same installation.
        current = await startStack({
          workers: 1,
          extraEnv: {
            DATABASE_URL,
            QUEUE_PREFIX: old.env.QUEUE_PREFIX!,
            SESSION_SECRET: old.env.SESSION_SECRET!,
          },
        });
        apiTraffic.add(current.apiUrl);
        step('current API and worker');

        // 3. Workers, one at a time: stop an old one (it drains), start a current one in its place.
        //    A service created now has its first deploy queued or running as the roll starts.
        late = await createReleaseService(api, customerId, 'upglate', { VERSION: 'late' });
        const inFlight = await unfinished(api, [...deployments, late.deploymentId]);
        expect(inFlight, 'deployments not final when the first old worker is stopped').toBeGreaterThan(0);
        steps.push(`${inFlight} deployments in flight at the roll`);
        const [, ...oldWorkers] = old.processes;
        for (const [index, worker] of oldWorkers.entries()) {
          const code = await stopGracefully(worker);
          expect(code, `old worker ${index + 1} exit code; output:\n${old.logs().slice(-4000)}`).toBe(0);
          if (index < oldWorkers.length - 1) current.startWorker();
          step(`old worker ${index + 1} drained`);
        }

        // 4. The old API last: out of the rotation first, as a load balancer drains it, then stopped.
        apiTraffic.remove(old.apiUrl);
        // The previous release bounds its drain (10 s, then exit 1: a stuck connection must not
        // keep a replica alive). Once seen at load ~15 with no request failed; what is promised is
        // that no request fails, asserted below, so a bounded exit is reported, not failed.
        const apiExit = await stopGracefully(old.processes[0]!);
        if (apiExit !== 0)
          steps.push(`old API exit ${apiExit} (its drain bound); output:\n${old.logs().slice(-2000)}`);
        step('old API drained');

        // 5. The current release deploys on the upgraded schema.
        const currentApi = apiClient(current.apiUrl, key);
        for (const id of [...deployments, late.deploymentId])
          expect((await waitDeployment(currentApi, id)).status).toBe('succeeded');
        step('in-flight deploys final');
        for (const { id } of services) deployments.push(await release(currentApi, id, { VERSION: '2' }));
        for (const id of deployments.slice(SERVICES))
          expect((await waitDeployment(currentApi, id)).status).toBe('succeeded');
        step('deploys by the current release');
      } finally {
        await Promise.all(visitors.map((traffic) => traffic.stop()));
        await apiTraffic.stop();
        // Printed whether or not a step threw: what had happened by then.
        const [caddy, apis] = [seen(), apiTraffic.summary()];
        console.log(
          `[upgrade] ${migrated.length} migrations applied under the old release (${migrated.join(', ') || 'none'}); ` +
            `${caddy.total} requests through Caddy, ${caddy.bad.length} not 2xx (${caddy.retried} retried after a Caddy reload reset), ` +
            `answers ${JSON.stringify(caddy.bodies)}; API requests by replica ${JSON.stringify(apis.byReplica)}, ` +
            `failed ${apis.failed.length}; steps: ${steps.join(', ')}`,
        );
      }

      const caddySeen = seen();
      const apiSeen = apiTraffic.summary();
      expect(caddySeen.bad).toEqual([]);
      expect(caddySeen.total).toBeGreaterThan(SERVICES * 20);
      expect(apiSeen.failed).toEqual([]);
      // Both releases' APIs answered while they were in the rotation.
      expect(Object.keys(apiSeen.byReplica).sort()).toEqual([old.apiUrl, current.apiUrl].sort());
    },
    ROLLOUT_TIMEOUT_MS,
  );

  it('ends with every deployment final and succeeded, every service running the last release', async () => {
    const currentApi = apiClient(current!.apiUrl, key);
    for (const { id, host } of services) {
      expect(await settledStatus(currentApi, id)).toBe('running');
      const history = await currentApi.get<{ data: { status: string }[] }>(
        `/api/services/${id}/deployments?per_page=20`,
      );
      expect(history.body.data.map((deployment) => deployment.status)).toEqual(Array(3).fill('succeeded'));
      expect((await viaCaddy(host)).body).toBe('release-2');
    }
    expect(await settledStatus(currentApi, late!.id)).toBe('running');
    expect((await eventually(() => viaCaddy(late!.host), isGood)).body).toBe('release-late');
  });
});
