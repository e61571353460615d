import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { addDeployment, settleFirst } from '../../test-support/releases.js';

// GET /api/services/:id/deployments: the worker is simulated by writing deployment rows.
let h: Harness;
let customerId: string;
let operator: { auth: string };

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

interface Page {
  data: Record<string, unknown>[];
  total: number;
  page: number;
  per_page: number;
}

const history = (serviceId: string, query = '', auth = operator.auth) =>
  h.app.inject({ url: `/api/services/${serviceId}/deployments${query}`, headers: { authorization: auth } });

/** A service with five deployments, oldest first: the ids in the order they were requested. */
async function serviceWithHistory(): Promise<{ serviceId: string; ids: string[] }> {
  const { id: serviceId, deploy_job_id: first } = await h.createService(operator.auth, {
    customer_id: customerId,
  });
  await settleFirst(h, serviceId, first, { at: 0, variables: { SECRET_TOKEN: 'never-shown' } });
  const ids = [first];
  ids.push(await addDeployment(h, serviceId, { at: 60, status: 'failed', commit: 'a'.repeat(40) }));
  ids.push(
    await addDeployment(h, serviceId, {
      at: 120,
      imageDigests: { web: 'registry.test/web@sha256:' + 'b'.repeat(64) },
      updateOrder: 'start-first',
      warnings: ['services.web.deploy.replicas: one engine runs one container per component; 3 asked'],
      variables: { SECRET_TOKEN: 'never-shown' },
      compose: 'services: {}',
    }),
  );
  ids.push(await addDeployment(h, serviceId, { at: 180, status: 'rolled_back', updateOrder: 'stop-first' }));
  ids.push(await addDeployment(h, serviceId, { at: 240, status: 'running', step: 'pull', plan: null }));
  return { serviceId, ids };
}

describe('GET /api/services/:id/deployments', () => {
  it('pages the history newest first with page, per_page and total like the service list', async () => {
    const { serviceId, ids } = await serviceWithHistory();
    const newestFirst = [...ids].reverse();

    const first = json<Page>(await history(serviceId, '?page=1&per_page=2'));
    expect(first).toMatchObject({ total: 5, page: 1, per_page: 2 });
    expect(first.data.map((d) => d.id)).toEqual(newestFirst.slice(0, 2));
    const third = json<Page>(await history(serviceId, '?page=3&per_page=2'));
    expect(third.data.map((d) => d.id)).toEqual(newestFirst.slice(4));
    const past = json<Page>(await history(serviceId, '?page=4&per_page=2'));
    expect(past).toEqual({ data: [], total: 5, page: 4, per_page: 2 });

    const all = json<Page>(await history(serviceId));
    expect(all).toMatchObject({ total: 5, page: 1, per_page: 20 });
    expect(all.data.map((d) => d.id)).toEqual(newestFirst);
  });

  it('shows what each deployment ran, and never its plan, logs, compose or variables', async () => {
    const { serviceId, ids } = await serviceWithHistory();
    const response = await history(serviceId);
    expect(response.body).not.toContain('never-shown');
    const byId = new Map(json<Page>(response).data.map((d) => [d.id, d]));
    expect(Object.keys(byId.get(ids[2] ?? '') ?? {}).sort()).toEqual(
      [
        'id',
        'service_id',
        'trigger',
        'status',
        'step',
        'commit',
        'image_digest',
        'image_digests',
        'update_order',
        'rollback_of',
        'warnings',
        'error',
        'created_at',
        'started_at',
        'finished_at',
      ].sort(),
    );
    expect(byId.get(ids[2] ?? '')).toMatchObject({
      service_id: serviceId,
      trigger: 'redeploy',
      status: 'succeeded',
      image_digests: { web: `registry.test/web@sha256:${'b'.repeat(64)}` },
      update_order: 'start-first',
      rollback_of: null,
      warnings: ['services.web.deploy.replicas: one engine runs one container per component; 3 asked'],
      created_at: '2026-01-01T00:02:00.000Z',
      finished_at: '2026-01-01T00:02:01.000Z',
    });
    expect(byId.get(ids[0] ?? '')).toMatchObject({
      trigger: 'create',
      image_digests: null,
      update_order: null,
      warnings: [],
    });
    expect(byId.get(ids[1] ?? '')).toMatchObject({ status: 'failed', commit: 'a'.repeat(40) });
    expect(byId.get(ids[3] ?? '')).toMatchObject({ status: 'rolled_back', update_order: 'stop-first' });
    expect(byId.get(ids[4] ?? '')).toMatchObject({ status: 'running', step: 'pull', finished_at: null });
  });

  it('keeps pages stable when deployments share a timestamp (id breaks the tie)', async () => {
    const { id: serviceId, deploy_job_id: first } = await h.createService(operator.auth, {
      customer_id: customerId,
    });
    await settleFirst(h, serviceId, first, { at: 0 });
    for (let i = 0; i < 4; i++) await addDeployment(h, serviceId, { at: 60 });
    const pages = await Promise.all(
      [1, 2, 3].map(async (page) => json<Page>(await history(serviceId, `?page=${page}&per_page=2`)).data),
    );
    const seen = pages.flat().map((d) => d.id);
    expect(new Set(seen).size).toBe(5);
    expect(seen.at(-1)).toBe(first);
  });

  it('shows only the services the caller may see: another customer, unknown and deleted are 404', async () => {
    const { serviceId } = await serviceWithHistory();
    const outsider = await h.user('operator', (await h.customer()).id);
    expect((await history(serviceId, '', outsider.auth)).statusCode).toBe(404);
    const viewer = await h.user('viewer', customerId);
    expect((await history(serviceId, '', viewer.auth)).statusCode).toBe(200);
    expect((await history('00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    await h.app.inject({
      method: 'DELETE',
      url: `/api/services/${serviceId}`,
      headers: { authorization: operator.auth },
    });
    expect((await history(serviceId)).statusCode).toBe(404);
  });

  it.each([
    ['?per_page=0', '/querystring/per_page'],
    ['?per_page=101', '/querystring/per_page'],
    ['?page=0', '/querystring/page'],
    ['?page=x', '/querystring/page'],
    ['?status=failed', '/querystring/status'],
  ])('%s → 400 naming %s', async (query, path) => {
    const { serviceId } = await serviceWithHistory();
    const response = await history(serviceId, query);
    expect(response.statusCode).toBe(400);
    expect(json<{ errors: { path: string }[] }>(response).errors.map((e) => e.path)).toContain(path);
  });
});
