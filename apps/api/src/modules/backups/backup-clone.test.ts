import { generateApiKey } from '@hostctl/auth-policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

// POST /api/backups/:id/clone without a worker (docs/backups.md#restore-into-a-new-service): what
// the API creates (the release's definition, no deployment yet, a queued restore), and what it
// refuses exactly as a create would (name, quotas), to whom, and across customers.
let h: Harness;
let customerId: string;
let operator: { auth: string };

// What the release ran: not the service's current compose (the harness's), so a copy of the
// current one would show.
const RELEASE_COMPOSE = 'services:\n  web:\n    image: local/busybox:1\n    ports:\n      - "9090"\n';

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

/** A service of `customer` whose succeeded release recorded a definition, and a backup of it. */
async function backedUpService(customer = customerId, auth = operator.auth) {
  const created = await h.createService(auth, { customer_id: customer });
  const db = h.container.db;
  await db.deployment.update({
    where: { id: created.deploy_job_id },
    data: {
      status: 'succeeded',
      sourceCompose: RELEASE_COMPOSE,
      sourceVariables: { GREETING: 'from-the-release', TOKEN: 's3cr3t-value' },
      sourceSecretNames: { TOKEN: '2026-11-01T00:00:00.000Z' },
      sourceVariableGroups: [],
    },
  });
  await db.service.update({ where: { id: created.id }, data: { status: 'running' } });
  const backup = await db.backup.create({
    data: {
      serviceId: created.id,
      customerId: customer,
      status: 'succeeded',
      method: 'stop',
      deploymentId: created.deploy_job_id,
      volumes: [{ name: 'data', snapshot_id: 'abcdef12', bytes: 1, files: 1 }],
    },
  });
  return { serviceId: created.id, backupId: backup.id };
}

const clone = (backupId: string, payload: object, auth = operator.auth) =>
  h.app.inject({
    method: 'POST',
    url: `/api/backups/${backupId}/clone`,
    headers: { authorization: auth },
    payload,
  });

describe('POST /api/backups/:id/clone', () => {
  it('creates a service of the same customer with the release definition and no deployment yet', async () => {
    const { serviceId, backupId } = await backedUpService();
    const name = unique('clone');
    const response = await clone(backupId, { name });
    expect(response.statusCode, response.body).toBe(202);
    const restore = json<{ id: string; service_id: string; backup_id: string; status: string }>(response);
    expect(restore).toMatchObject({ backup_id: backupId, status: 'queued' });
    expect(restore.service_id).not.toBe(serviceId);

    const created = await h.container.db.service.findUniqueOrThrow({ where: { id: restore.service_id } });
    expect(created).toMatchObject({ name, customerId, status: 'deploying', compose: RELEASE_COMPOSE });
    expect(created.variables).toEqual({ GREETING: 'from-the-release', TOKEN: 's3cr3t-value' });
    expect(Object.keys(created.secretNames as object)).toEqual(['TOKEN']);
    // The worker queues the first deployment once the volumes hold the data: none before.
    expect(await h.container.db.deployment.count({ where: { serviceId: created.id } })).toBe(0);
    const row = await h.container.db.backupRestore.findUniqueOrThrow({ where: { id: restore.id } });
    expect(row).toMatchObject({ serviceId: created.id, customerId, status: 'queued' });

    // The secret stays write-only on the clone; the restore answers through GET /api/restores/:id.
    const detail = await h.app.inject({
      method: 'GET',
      url: `/api/services/${created.id}`,
      headers: { authorization: operator.auth },
    });
    expect(detail.body).not.toContain('s3cr3t-value');
    const again = await h.app.inject({
      method: 'GET',
      url: `/api/restores/${restore.id}`,
      headers: { authorization: operator.auth },
    });
    expect(json(again)).toMatchObject({ id: restore.id, service_id: created.id });
    // The source is untouched.
    const source = await h.container.db.service.findUniqueOrThrow({ where: { id: serviceId } });
    expect(source.status).toBe('running');
  });

  it('refuses a bad or taken name like a create, and stores nothing', async () => {
    const { backupId } = await backedUpService();
    const before = await h.container.db.service.count({ where: { customerId } });
    for (const payload of [{}, { name: 'Not A Name!' }, { name: unique('ok'), extra: 1 }]) {
      const response = await clone(backupId, payload);
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect(json<{ detail: string }>(await clone(backupId, { name: 'Not A Name!' })).detail).toContain(
      '/body/name',
    );
    const taken = unique('taken');
    expect((await clone(backupId, { name: taken })).statusCode).toBe(202);
    const again = await clone(backupId, { name: taken });
    expect(again.statusCode, again.body).toBe(409);
    expect(json<{ detail: string }>(again).detail).toContain(`a service named ${taken} already exists`);
    expect(await h.container.db.service.count({ where: { customerId } })).toBe(before + 1);
  });

  it('replays the first answer for the same Idempotency-Key and creates one service', async () => {
    const { backupId } = await backedUpService();
    const name = unique('replay');
    const send = () =>
      h.app.inject({
        method: 'POST',
        url: `/api/backups/${backupId}/clone`,
        headers: { authorization: operator.auth, 'idempotency-key': `clone-${name}` },
        payload: { name },
      });
    const first = await send();
    const second = await send();
    expect(first.statusCode, first.body).toBe(202);
    expect(second.statusCode).toBe(202);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(json<{ id: string }>(second).id).toBe(json<{ id: string }>(first).id);
    expect(await h.container.db.service.count({ where: { name } })).toBe(1);
  });

  it("answers another customer's backup with the body of an unknown one", async () => {
    const other = await h.customer();
    const otherOperator = await h.user('operator', other.id);
    const { backupId } = await backedUpService(other.id, otherOperator.auth);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const across = await clone(backupId, { name: unique('steal') });
    const missing = await clone(unknown, { name: unique('steal') });
    expect(across.statusCode).toBe(404);
    const body = (response: typeof across, id: string) => {
      const { request_id: _requestId, ...rest } = json<Record<string, unknown>>(response);
      return JSON.stringify(rest).replaceAll(id, 'ID');
    };
    expect(body(across, backupId)).toBe(body(missing, unknown));
    expect(await h.container.db.service.count({ where: { customerId: other.id } })).toBe(1);
    expect(await h.container.db.backupRestore.count({ where: { backupId } })).toBe(0);
  });

  it('refuses viewers (403) and deploy tokens, which may not create services', async () => {
    const { backupId } = await backedUpService();
    const viewer = await h.user('viewer', customerId);
    expect((await clone(backupId, { name: unique('v') }, viewer.auth)).statusCode).toBe(403);
    const owner = await h.container.db.user.findFirstOrThrow({ where: { customerId, role: 'operator' } });
    const { key, digest } = generateApiKey();
    const { serviceId } = await backedUpService();
    await h.store.createApiKey({
      userId: owner.id,
      name: 'ci',
      digest,
      expiresAt: null,
      serviceId,
      customerId,
      actions: ['read', 'deploy', 'manage'],
    });
    expect((await clone(backupId, { name: unique('t') }, `Bearer ${key}`)).statusCode).toBe(403);
  });

  it("refuses past the customer's service quota, and a backup that is not restorable (409)", async () => {
    const { backupId } = await backedUpService();
    const count = await h.container.db.service.count({ where: { customerId, deletedAt: null } });
    await h.container.db.customer.update({
      where: { id: customerId },
      data: { quotaOverrides: { services: count } },
    });
    try {
      const refused = await clone(backupId, { name: unique('over') });
      expect(refused.statusCode, refused.body).toBe(409);
      expect(json<{ detail: string }>(refused).detail).toMatch(/services/);
      expect(await h.container.db.service.count({ where: { customerId, deletedAt: null } })).toBe(count);
    } finally {
      await h.container.db.customer.update({ where: { id: customerId }, data: { quotaOverrides: {} } });
    }
    await h.container.db.backup.update({ where: { id: backupId }, data: { status: 'failed' } });
    const failed = await clone(backupId, { name: unique('failed') });
    expect(failed.statusCode).toBe(409);
    expect(json<{ detail: string }>(failed).detail).toContain('only a succeeded backup can be restored');
  });
});
