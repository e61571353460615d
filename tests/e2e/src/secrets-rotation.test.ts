import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  createDatabase,
  keyringFromEnvironment,
  migrate,
  MIGRATIONS_DIR,
  recreateDatabase,
} from '@hostctl/db';
import { apiClient, appBundles } from '@hostctl/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { E2E_DATABASE_URL, TEST_IMAGE } from './env.js';
import { operatorApi, waitDeployment, type Api } from './release-fixtures.js';
import { ROOT, startStack, type Stack } from './stack.js';

/**
 * Issue 30's acceptance, "key rotation under a running deploy loop", done as docs/secrets.md#rotation
 * tells the operator: the api and worker restarted with the new key-encryption key current and the
 * old one retired, then `hostctl secrets rotate` while PATCHes of plain and secret variables and
 * redeploys keep running for two customers (two data keys). Every deployment ends `succeeded`,
 * nothing is left wrapped by the old key, the old key reads until the rotation is done, and
 * afterwards the new key alone opens every value, which reads back as it was last written.
 *
 * Its own database (the rotation changes which key opens the data keys; the other e2e files share
 * theirs with the test env's key).
 */
const DATABASE_URL = (() => {
  const url = new URL(E2E_DATABASE_URL);
  url.pathname = `${url.pathname}_rotation`;
  return url.toString();
})();
const OLD = { id: 'rot-old', key: randomBytes(32).toString('base64') };
const NEW = { id: 'rot-new', key: randomBytes(32).toString('base64') };
const keysEnv = (current: typeof OLD, retired?: typeof OLD) => ({
  SECRETS_KEK: current.key,
  SECRETS_KEK_ID: current.id,
  SECRETS_KEK_RETIRED: retired ? `${retired.id}:${retired.key}` : '',
});
const ROUNDS = 4;

const COMPOSE = `services:
  web:
    image: ${TEST_IMAGE}
    command: ["httpd", "-f", "-p", "8080", "-h", "/"]
    ports: ["8080"]
    environment:
      VERSION: \${VERSION}
      DB_PASSWORD: \${DB_PASSWORD}
`;

interface Tenant {
  key: string;
  serviceId: string;
  /** What each of its deployments ran: deployment id → variables. */
  ran: Map<string, Record<string, string>>;
  last: Record<string, string>;
}

let stack: Stack | undefined;
const stacks: Stack[] = [];
const tenants: Tenant[] = [];

async function start(extraEnv: Record<string, string>): Promise<Stack> {
  const started = await startStack({ extraEnv: { DATABASE_URL, ...extraEnv } });
  stacks.push(started);
  return started;
}

/** `hostctl secrets …` as the operator runs it, with the given keys; exit code and output. */
function secretsCli(env: Record<string, string>, ...args: string[]) {
  const bundle = appBundles(inject('bundles')).entryOf('apps/cli/src/main.ts');
  const child = spawn(process.execPath, [bundle, 'secrets', ...args, '--json'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL, ...env },
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise<{ code: number | null; out: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, out })),
  );
}

const api = (tenant: Tenant): Api => apiClient(stack!.apiUrl, tenant.key);

async function patch(tenant: Tenant, round: number): Promise<string> {
  const version = `v${round}`;
  const password = `rotation-pw-${round}-${randomUUID()}`;
  const reply = await api(tenant).request<{ deploy_job_id: string }>(
    'PATCH',
    `/api/services/${tenant.serviceId}`,
    { variables: { VERSION: version }, secret_variables: { DB_PASSWORD: password } },
  );
  if (reply.status !== 200) throw new Error(`PATCH answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  tenant.last = { VERSION: version, DB_PASSWORD: password };
  tenant.ran.set(reply.body.deploy_job_id, tenant.last);
  return reply.body.deploy_job_id;
}

async function redeploy(tenant: Tenant): Promise<string> {
  const reply = await api(tenant).post<{ deploy_job_id: string }>(
    `/api/services/${tenant.serviceId}/redeploy`,
  );
  const id = reply.body.deploy_job_id;
  if (reply.status !== 200)
    throw new Error(`redeploy answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  tenant.ran.set(id, tenant.last);
  return id;
}

/** Each round a PATCH (plain and secret) and a redeploy, each waited for; `inFlight` after the first PATCH. */
async function deployLoop(tenant: Tenant, onFirstInFlight: (deploymentId: string) => void) {
  const statuses: string[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const patched = await patch(tenant, round);
    if (round === 1) onFirstInFlight(patched);
    statuses.push((await waitDeployment(api(tenant), patched)).status);
    statuses.push((await waitDeployment(api(tenant), await redeploy(tenant))).status);
  }
  return statuses;
}

beforeAll(async () => {
  await recreateDatabase(DATABASE_URL);
  await migrate(DATABASE_URL, MIGRATIONS_DIR);
  // The installation as it ran before the rotation: the old key only. Each customer's first
  // variables make its data key, wrapped by the old key.
  stack = await start(keysEnv(OLD));
  for (const label of ['rot-a', 'rot-b']) {
    const operator = await operatorApi(stack, label);
    const created = await operator.api.post<{ id: string; deploy_job_id: string }>('/api/services', {
      name: `${label}-${Date.now().toString(36)}`,
      customer_id: operator.customerId,
      deploy_method: 'compose',
      compose: COMPOSE,
      variables: { VERSION: 'v0' },
      secret_variables: { DB_PASSWORD: `rotation-pw-0-${randomUUID()}` },
    });
    expect(created.status).toBe(201);
    expect((await waitDeployment(operator.api, created.body.deploy_job_id)).status).toBe('succeeded');
    tenants.push({ key: operator.key, serviceId: created.body.id, ran: new Map(), last: {} });
  }
}, 300_000);
afterAll(async () => {
  for (const tenant of tenants)
    if (stack)
      await api(tenant)
        .delete(`/api/services/${tenant.serviceId}`)
        .catch(() => undefined);
  await Promise.all(stacks.map((s) => s.stop()));
});

describe('rotating the key-encryption key while deploys run', { timeout: 600_000 }, () => {
  it('every deployment succeeds, no data key is left under the old key, every value reads back', async () => {
    const old = stack!;
    // Step 2 of docs/secrets.md#rotation: restart with the new key current and the old one retired
    // (the same installation: queue, session secret, database), one process set after the other.
    stack = await start({
      ...keysEnv(NEW, OLD),
      QUEUE_PREFIX: old.env.QUEUE_PREFIX!,
      SESSION_SECRET: old.env.SESSION_SECRET!,
    });
    await old.stop({ keepServices: true });

    // Until the rotation is done the old key is needed: the new key alone does not open the data keys.
    const early = await secretsCli(keysEnv(NEW), 'verify');
    expect(early.code).toBe(2);
    expect(early.out).toContain(OLD.id);

    let markInFlight!: (id: string) => void;
    const inFlight = new Promise<string>((resolve) => (markInFlight = resolve));
    let firstInFlight = true;
    const loops = tenants.map((tenant) =>
      deployLoop(tenant, (id) => {
        if (firstInFlight) markInFlight(id);
        firstInFlight = false;
      }),
    );

    // Step 3, while the loop runs: a deployment is queued or running when the rotation starts.
    const running = await inFlight;
    const atStart = await waitDeploymentNow(running);
    const rotated = await secretsCli(keysEnv(NEW, OLD), 'rotate');
    expect(rotated.code, rotated.out).toBe(0);
    const report = JSON.parse(rotated.out) as { kek_id: string; rewrapped: number };
    expect(report.kek_id).toBe(NEW.id);
    expect(report.rewrapped).toBeGreaterThanOrEqual(2); // both customers' data keys (and the platform's, if made)

    const statuses = (await Promise.all(loops)).flat();
    expect(statuses).toHaveLength(tenants.length * ROUNDS * 2);
    expect(
      statuses.every((status) => status === 'succeeded'),
      statuses.join(','),
    ).toBe(true);
    expect(['queued', 'running'], 'the rotation ran while a deployment was in flight').toContain(atStart);

    // Nothing is left under the old key: a second rotation re-wraps nothing, the new key alone
    // verifies, and a process configured with the old key only would now refuse, naming the new one.
    const again = JSON.parse((await secretsCli(keysEnv(NEW, OLD), 'rotate')).out) as { rewrapped: number };
    expect(again.rewrapped).toBe(0);
    expect((await secretsCli(keysEnv(NEW), 'verify')).code).toBe(0);
    const stale = await secretsCli(keysEnv(OLD), 'verify');
    expect(stale.code).toBe(2);
    expect(stale.out).toContain(NEW.id);

    // Step 4: the old key removed and the processes restarted with the new key only.
    const rotating = stack;
    stack = await start({
      ...keysEnv(NEW),
      QUEUE_PREFIX: rotating.env.QUEUE_PREFIX!,
      SESSION_SECRET: rotating.env.SESSION_SECRET!,
    });
    await rotating.stop({ keepServices: true });

    const database = createDatabase({
      url: DATABASE_URL,
      max: 2,
      keys: keyringFromEnvironment(keysEnv(NEW)),
    });
    try {
      const kekIds = await database.db.dataKey.findMany({ select: { kekId: true } });
      expect(kekIds.length).toBeGreaterThanOrEqual(2);
      expect(new Set(kekIds.map((row) => row.kekId))).toEqual(new Set([NEW.id]));
      for (const tenant of tenants) {
        // Through the API: the plain value in the detail, the secret by the audited reveal.
        const detail = await api(tenant).get<{ variables: Record<string, string> }>(
          `/api/services/${tenant.serviceId}`,
        );
        expect(detail.body.variables).toEqual({ VERSION: tenant.last.VERSION });
        const revealed = await api(tenant).post<{ value: string }>(
          `/api/services/${tenant.serviceId}/secret-variables/reveal`,
          { name: 'DB_PASSWORD' },
        );
        expect(revealed.body.value).toBe(tenant.last.DB_PASSWORD);
        // Every release of the loop still opens with the new key alone, to what it ran.
        const releases = await database.db.deployment.findMany({
          where: { id: { in: [...tenant.ran.keys()] } },
          select: { id: true, sourceVariables: true },
        });
        expect(releases).toHaveLength(tenant.ran.size);
        for (const release of releases) expect(release.sourceVariables).toEqual(tenant.ran.get(release.id));
        // And the service still deploys under the new key alone.
        expect((await waitDeployment(api(tenant), await redeploy(tenant))).status).toBe('succeeded');
      }
    } finally {
      await database.db.$disconnect();
    }
  });
});

async function waitDeploymentNow(id: string): Promise<string> {
  const owner = tenants.find((tenant) => tenant.ran.has(id))!;
  const reply = await api(owner).get<{ status: string }>(`/api/deployments/${id}`);
  return reply.body.status;
}
