import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMPOSE_BUSYBOX,
  createHarness,
  json,
  uniqueName,
  type Harness,
} from '../../test-support/harness.js';

let h: Harness;
let operator: { auth: string };
let viewer: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness();
  operator = await h.user('operator');
  customerId = (await h.customer()).id;
  viewer = await h.user('viewer', customerId);
});
afterAll(async () => h.close());

async function create(payload: Record<string, unknown> = {}) {
  const created = await h.createService(operator.auth, { customer_id: customerId, ...payload });
  // Let the first deployment start so the update queues a new one.
  await h.container.db.deployment.update({
    where: { id: created.deploy_job_id },
    data: { status: 'succeeded' },
  });
  return created;
}

const patch = (id: string, payload: unknown, auth = operator.auth) =>
  h.app.inject({
    method: 'PATCH',
    url: `/api/services/${id}`,
    headers: { authorization: auth },
    payload: payload as object,
  });

describe('PATCH /api/services/:id', () => {
  it('merges variables (null removes one), saves custom domains and queues a redeploy', async () => {
    const { id, deploy_job_id } = await create({
      deploy_method: 'compose',
      compose: COMPOSE_BUSYBOX,
      variables: { A: '1', B: '2' },
    });
    const domain = `${uniqueName('www')}.shop.example.com`;
    const response = await patch(id, { variables: { B: null, C: '3' }, custom_domains: [domain] });
    expect(response.statusCode).toBe(200);
    const body = json<{
      variables: Record<string, string>;
      custom_domains: string[];
      status: string;
      deploy_job_id: string;
    }>(response);
    expect(body.variables).toEqual({ A: '1', C: '3' });
    expect(body.custom_domains).toEqual([domain]);
    expect(body.status).toBe('deploying');
    expect(body.deploy_job_id).not.toBe(deploy_job_id);
    const deployment = await h.container.db.deployment.findUnique({ where: { id: body.deploy_job_id } });
    expect(deployment).toMatchObject({ status: 'queued', trigger: 'redeploy' });
  });

  it('keeps generated template secrets when other variables change', async () => {
    const { id } = await create({ deploy_method: 'template', template_id: 'postgres' });
    const before = await h.container.db.service.findUniqueOrThrow({ where: { id } });
    const response = await patch(id, { variables: { POSTGRES_DB: 'shop' } });
    expect(response.statusCode).toBe(200);
    const variables = json<{ variables: Record<string, string> }>(response).variables;
    expect(variables.POSTGRES_DB).toBe('shop');
    const after = await h.container.db.service.findUniqueOrThrow({ where: { id } });
    const password = (before.variables as Record<string, string>).POSTGRES_PASSWORD;
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    expect((after.variables as Record<string, string>).POSTGRES_PASSWORD).toBe(password);
  });

  it.each([
    ['empty body', {}, '/body'],
    ['unknown field', { name: 'other' }, '/body/name'],
    ['bad domain', { custom_domains: ['not a domain'] }, '/body/custom_domains/0'],
    ['duplicate domains', { custom_domains: ['a.example.com', 'a.example.com'] }, '/body/custom_domains'],
    ['domain under the apps domain', { custom_domains: ['x.apps.localhost'] }, '/body/custom_domains/0'],
    [
      'template variable breaking its pattern',
      { variables: { POSTGRES_USER: 'No Way' } },
      '/body/variables/POSTGRES_USER',
    ],
  ])('%s → 400 naming %s', async (_label, payload, path) => {
    const { id } = await create({ deploy_method: 'template', template_id: 'postgres' });
    const response = await patch(id, payload);
    expect(response.statusCode).toBe(400);
    expect(json<{ errors: { path: string }[] }>(response).errors.map((e) => e.path)).toContain(path);
  });

  it('https: redirect on and no HSTS by default; a field left out keeps its value', async () => {
    const { id } = await create();
    const detail = async () =>
      json<{ https: unknown }>(
        await h.app.inject({
          method: 'GET',
          url: `/api/services/${id}`,
          headers: { authorization: operator.auth },
        }),
      ).https;
    expect(await detail()).toEqual({ redirect: true, hsts: false });
    const changed = await patch(id, { https: { hsts: true } });
    expect(changed.statusCode).toBe(200);
    expect(json<{ https: unknown }>(changed).https).toEqual({
      redirect: true,
      hsts: { max_age: 31_536_000 },
    });
    expect((await patch(id, { https: { redirect: false, hsts: { max_age: 600 } } })).statusCode).toBe(200);
    expect(await detail()).toEqual({ redirect: false, hsts: { max_age: 600 } });
    expect((await patch(id, { https: { hsts: false } })).statusCode).toBe(200);
    expect(await detail()).toEqual({ redirect: false, hsts: false });
  });

  it.each([
    ['a max_age of 0', { https: { hsts: { max_age: 0 } } }, '/body/https/hsts/max_age'],
    ['a max_age over two years', { https: { hsts: { max_age: 63_072_001 } } }, '/body/https/hsts/max_age'],
    ['a redirect that is not a boolean', { https: { redirect: 'no' } }, '/body/https/redirect'],
    ['an unknown https field', { https: { preload: true } }, '/body/https/preload'],
    ['an empty https object', { https: {} }, '/body/https'],
  ])('https with %s → 400 naming %s', async (_label, payload, path) => {
    const { id } = await create();
    const response = await patch(id, payload);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(json<{ errors: { path: string }[] }>(response).errors.map((e) => e.path)).toContain(path);
  });

  it('a domain another service uses → 409', async () => {
    const domain = `${uniqueName('d')}.example.com`;
    const first = await create();
    expect((await patch(first.id, { custom_domains: [domain] })).statusCode).toBe(200);
    const second = await create();
    const response = await patch(second.id, { custom_domains: [domain] });
    expect(response.statusCode).toBe(409);
    expect(json(response).detail).toContain(domain);
  });

  it('viewers may not change a service; other customers get 404', async () => {
    const { id } = await create();
    expect((await patch(id, { variables: { A: '1' } }, viewer.auth)).statusCode).toBe(403);
    const outsider = await h.user('operator', (await h.customer()).id);
    expect((await patch(id, { variables: { A: '1' } }, outsider.auth)).statusCode).toBe(404);
  });
});
