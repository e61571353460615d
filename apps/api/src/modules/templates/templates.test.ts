import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog } from '@hostctl/templates';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

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

const create = (payload: Record<string, unknown>) =>
  h.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { authorization: operator.auth },
    payload: { name: uniqueName('tpl'), customer_id: customerId, deploy_method: 'template', ...payload },
  });

describe('GET /api/templates', () => {
  it('lists the catalog with declared variables, for any signed-in role', async () => {
    const response = await h.app.inject({ url: '/api/templates', headers: { authorization: viewer.auth } });
    expect(response.statusCode).toBe(200);
    const body = json<{
      data: { id: string; variables: { name: string; generated: boolean }[] }[];
      total: number;
    }>(response);
    expect(body.total).toBe(body.data.length);
    const postgres = body.data.find((t) => t.id === 'postgres');
    expect(postgres?.variables).toContainEqual(
      expect.objectContaining({ name: 'POSTGRES_PASSWORD', generated: true }),
    );
  });

  it('says of every variable whether it is secret, as the catalog declares, so a form can mask it', async () => {
    const response = await h.app.inject({ url: '/api/templates', headers: { authorization: viewer.auth } });
    const { data } = json<{ data: { id: string; variables: { name: string; secret: unknown }[] }[] }>(
      response,
    );
    const variable = (template: string, name: string) =>
      data.find((t) => t.id === template)?.variables.find((v) => v.name === name);
    expect(variable('postgres', 'POSTGRES_PASSWORD')?.secret).toBe(true);
    expect(variable('postgres', 'POSTGRES_USER')?.secret).toBe(false);
    expect(variable('static-site', 'MESSAGE')?.secret).toBe(false);
    // Every variable of every entry, against the catalog's own reading of its YAML.
    const catalog = loadCatalog();
    const answered = data.flatMap((t) => t.variables.map((v) => [t.id, v.name, v.secret]));
    const declared = [...catalog.values()].flatMap((t) => t.variables.map((v) => [t.id, v.name, v.secret]));
    expect(answered).toEqual(declared);
  });
});

describe('POST /api/services with deploy_method template', () => {
  it('creates the service with resolved variables and shows the template on list and detail', async () => {
    const response = await create({ template_id: 'static-site', variables: { MESSAGE: 'hi there' } });
    expect(response.statusCode).toBe(201);
    const { id, name } = json<{ id: string; name: string }>(response);
    const detail = json(
      await h.app.inject({ url: `/api/services/${id}`, headers: { authorization: operator.auth } }),
    );
    expect(detail).toMatchObject({
      template: 'static-site',
      deploy_method: 'template',
      variables: { MESSAGE: 'hi there', IMAGE: 'local/busybox:1' },
    });
    expect(detail.compose).toContain('httpd');
    const list = json<{ data: { template?: string }[] }>(
      await h.app.inject({ url: `/api/services?search=${name}`, headers: { authorization: operator.auth } }),
    );
    expect(list.data[0]?.template).toBe('static-site');
  });

  it('generates secrets the template declares', async () => {
    const { id } = json<{ id: string }>(await create({ template_id: 'postgres' }));
    // A secret variable (services.template-secrets.test.ts): the stored value, never the detail's.
    const row = await h.container.db.service.findUniqueOrThrow({ where: { id } });
    expect((row.variables as Record<string, string>).POSTGRES_PASSWORD).toMatch(/^[A-Za-z0-9]{32}$/);
  });

  it.each([
    ['unknown template', { template_id: 'no-such-template' }, '/body/template_id'],
    ['missing required variable', { template_id: 'ghost' }, '/body/variables/SITE_URL'],
    [
      'variable breaking its pattern',
      { template_id: 'postgres', variables: { POSTGRES_USER: 'Robert; DROP' } },
      '/body/variables/POSTGRES_USER',
    ],
    [
      'undeclared variable',
      { template_id: 'postgres', variables: { SURPRISE: '1' } },
      '/body/variables/SURPRISE',
    ],
  ])('%s → 400 naming %s', async (_label, payload, path) => {
    const response = await create(payload);
    expect(response.statusCode).toBe(400);
    expect(json<{ errors: { path: string }[] }>(response).errors.map((e) => e.path)).toContain(path);
  });
});
