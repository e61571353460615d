import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, keyringFromEnvironment, type Db } from '@hostctl/db';
import { freePort } from '@hostctl/testing';
import { startCaddyAdminDelay, type CaddyAdminDelay } from './caddy-admin-delay.js';
import { createFaultClient, type FaultClient } from './fault-client.js';
import {
  CADDY_ADMIN_URL,
  FAULT_DATABASE_URL,
  FAULT_RUNTIME,
  LOG_DIR,
  PDNS,
  RESTART_DOCKER,
  runtimeEnv,
} from './fault-env.js';
import { checkMeteringBacklog, plantMeteringBacklog } from './metering-backlog.js';
import { notificationDurabilityPhase } from './notification-phase.js';
import { releaseCutoverKillsPhase } from './release-kills.js';
import { findRoutingLeftovers, removeInstallationRoutes } from './routing-leftovers.js';
import { startFaultStack, type FaultStack } from './fault-stack.js';
import { findOwnedLeftovers, sampleContainerSets, waitForNoStandby } from './invariants.js';
import { startPgProxy, type PgProxy } from './pg-proxy.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { createLedger, waitFinal, type Ledger } from './request-ledger.js';
import { createFaultReport } from './fault-report.js';
import { workloadsFor } from './workloads.js';
import {
  dockerRestartPhase,
  postgresCutPhase,
  redisRestartPhase,
  removedContainerPhase,
  sigtermDrainPhase,
  trafficUnderKillsPhase,
  type PhaseContext,
} from './fault-phases.js';

/**
 * The fault-injection run: 3 workers and 2 APIs of one installation take ≥ 30 deploys, redeploys
 * and deletes while workers are SIGKILLed at random, one is SIGTERMed mid-deploy, the suite's own
 * Redis restarts empty, PostgreSQL is cut (through a proxy), a container is removed by hand and,
 * with FAULT_RESTART_DOCKER=1, the Docker engine restarts. Then every promise is checked. With
 * FAULT_RUNTIME=swarm the workers run RUNTIME=swarm and the engine restarted is the swarm engine.
 */
const workloads = workloadsFor();
const report = createFaultReport();
let redis: RedisServer;
let proxy: PgProxy;
let caddy: CaddyAdminDelay | undefined;
let stack: FaultStack;
let db: Db;
let ledger: Ledger;
let api: { client: FaultClient; customerId: string };
let sampler: ReturnType<typeof sampleContainerSets>;

beforeAll(async () => {
  redis = await startRedisServer(await freePort());
  const target = new URL(FAULT_DATABASE_URL);
  proxy = await startPgProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const proxied = new URL(FAULT_DATABASE_URL);
  proxied.port = String(proxy.port);
  if (CADDY_ADMIN_URL) caddy = await startCaddyAdminDelay(CADDY_ADMIN_URL);
  stack = await startFaultStack({
    databaseUrl: proxied.toString(),
    cliDatabaseUrl: FAULT_DATABASE_URL,
    redisUrl: redis.url,
    apis: 2,
    workers: 3,
    extraEnv: {
      ...runtimeEnv(),
      WORKER_CONCURRENCY: '2',
      RECONCILE_INTERVAL_MS: '5000',
      DEPLOY_TIMEOUT_MS: '120000',
      // Start-first cutovers with short windows: the phases test what happens in them, not how long.
      RELEASE_STABILIZATION_MS: '2000',
      RELEASE_DRAIN_MS: '2000',
      // Notifications: a loopback receiver (notification-phase.ts), quick retries, a short claim.
      NOTIFICATION_ALLOWED_HOSTS: '127.0.0.1:32768-60999',
      NOTIFY_RETRY_BASE_MS: '300',
      NOTIFY_TIMEOUT_MS: '3000',
      NOTIFY_RELAY_INTERVAL_MS: '500',
      NOTIFY_MAX_ATTEMPTS: '30',
      // Closing hours of usage often, so the planted backlog (metering-backlog.ts) closes under the chaos.
      METERING_INTERVAL_MS: '2000',
      ...(caddy ? { CADDY_ADMIN_URL: caddy.url } : {}),
    },
  });
  db = createDb({ url: FAULT_DATABASE_URL, max: 4, keys: keyringFromEnvironment(process.env) });
  const customer = await stack.cli('customers', 'create', '--name', `fault-${Date.now()}`);
  const email = `fault-${Date.now()}@fault.test`;
  await stack.cli('users', 'create', '--email', email, '--name', 'Fault', '--role', 'operator');
  const key = await stack.cli('api-keys', 'create', '--email', email, '--name', 'fault');
  const client = createFaultClient(
    stack.apis.map((api) => api.url),
    key.key as string,
  );
  ledger = createLedger(client, customer.id as string);
  api = { client, customerId: customer.id as string };
  sampler = sampleContainerSets(workloads, stack.env.QUEUE_PREFIX!);
  report.note(`installation ${stack.env.QUEUE_PREFIX}, RUNTIME=${FAULT_RUNTIME}; process logs in ${LOG_DIR}`);
});

afterAll(async () => {
  await sampler?.stop();
  await stack?.stop();
  await redis?.stop();
  await proxy?.close();
  await caddy?.close();
  // Best effort: whatever a failed run left, labelled with this run's installation only.
  if (stack) await workloads.removeInstallation(stack.env.QUEUE_PREFIX!).catch(() => undefined);
  if (stack) await removeInstallationRoutes(stack.env.QUEUE_PREFIX!);
  await db?.$disconnect();
});

describe('fault injection', () => {
  it('keeps every accepted request and every invariant through kills and outages', async () => {
    const ctx: PhaseContext = {
      stack,
      db,
      workloads,
      ledger,
      report,
      redis,
      proxy,
      ...(caddy ? { caddy } : {}),
    };
    // FAULT_PHASES=cutover,redis (keys below) runs only those, e.g. while working on one of them.
    const only = process.env.FAULT_PHASES?.split(',');
    const phase = async (key: string, name: string, run: () => Promise<void>) => {
      if (!only || only.includes(key)) await report.phase(name, run);
      else report.note(`${name}: skipped (FAULT_PHASES)`);
    };
    // 30 days of usage to close, planted as the kills start (metering-backlog.ts).
    const metering = await plantMeteringBacklog(db, 30 * 24);
    await phase('kills', 'traffic under SIGKILL', () => trafficUnderKillsPhase(ctx));
    await phase('sigterm', 'SIGTERM drain', () => sigtermDrainPhase(ctx));
    // Another backlog (its own customer) closes across the Redis restart: closing needs no Redis.
    const meteringAcrossRedis = await plantMeteringBacklog(db, 30 * 24);
    await phase('redis', 'Redis restart', () => redisRestartPhase(ctx));
    await phase('notify', 'notifications across a SIGKILL and a Redis restart', () =>
      notificationDurabilityPhase(ctx, api),
    );
    await phase('postgres', 'PostgreSQL cut', () => postgresCutPhase(ctx));
    await phase('container', 'container removed by hand', () => removedContainerPhase(ctx));
    await phase('cutover', 'SIGKILL at every cutover step', () => releaseCutoverKillsPhase(ctx));
    if (RESTART_DOCKER) await phase('docker', 'Docker restart', () => dockerRestartPhase(ctx));
    else report.note('Docker restart: skipped (set FAULT_RESTART_DOCKER=1; scripts/test-all.sh does)');

    await report.phase('final state', async () => {
      await waitFinal(db, ledger.accepted, 120_000).catch((error: Error) => report.fail(error.message));
      const stuck = await db.service.findMany({
        where: { id: { in: [...ledger.live] }, status: 'deploying' },
        select: { id: true },
      });
      report.check(
        stuck.length === 0,
        `services still deploying at the end: ${stuck.map((s) => s.id).join(', ')}`,
      );
      const sets = await sampler.stop();
      report.note(
        `container sets: ${sets.samples} samples, at most ${sets.maxSetsPerService} set(s) per service, ${sets.maxContainersPerComponent} container(s) per component and ${sets.maxStandbysPerService} standby task(s) per service`,
      );
      // Start-first: the old set and the new one side by side during a cutover, never a third.
      report.check(
        sets.maxSetsPerService <= 2,
        `three container sets at once: ${sets.violations.join('; ')}`,
      );
      report.check(
        sets.maxContainersPerComponent <= 2,
        'more than two containers for one service component at once',
      );
      // Swarm: one standby of the serving release during a release, and none once all are over.
      report.check(sets.maxStandbysPerService <= 1, 'more than one standby for one service at once');
      const standbys = await waitForNoStandby(workloads, stack.env.QUEUE_PREFIX!, 60_000);
      report.check(
        standbys.length === 0,
        `standbys left after every deployment ended: ${standbys.join(', ')}`,
      );
    });

    await report.phase('metering', async () => {
      await checkMeteringBacklog(db, metering, report);
      await checkMeteringBacklog(db, meteringAcrossRedis, report);
    });

    await report.phase('cleanup', async () => {
      for (const serviceId of [...ledger.live]) await ledger.remove(serviceId);
      await waitFinal(db, ledger.accepted, 90_000).catch((error: Error) => report.fail(error.message));
      const leftovers = await findOwnedLeftovers(workloads, db, stack.env.QUEUE_PREFIX!);
      report.check(leftovers.length === 0, `owned objects without a live service: ${leftovers.join(', ')}`);
      report.note(`owned objects left without a live service: ${leftovers.length}`);
      if (CADDY_ADMIN_URL || PDNS.enabled) {
        const routing = await findRoutingLeftovers(db, stack.env.QUEUE_PREFIX!);
        report.check(
          routing.length === 0,
          `routes/DNS records without a live service: ${routing.join(', ')}`,
        );
        report.note(`routes/DNS records left without a live service: ${routing.length}`);
      } else {
        report.note('routes/DNS records: not checked (neither Caddy nor PowerDNS is configured)');
      }
    });

    await report.summary({ stack, db, ledger });
    expect(report.failures).toEqual([]);
  });
});
