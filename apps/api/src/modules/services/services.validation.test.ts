import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMPOSE_BUSYBOX,
  createHarness,
  json,
  uniqueName,
  type Harness,
} from '../../test-support/harness.js';

// Bad input of every kind gets a 400 (or 404/413/415) problem naming what is wrong, and stores nothing.
let h: Harness;
let admin: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness();
  admin = await h.user('admin');
  customerId = (await h.customer()).id;
});
afterAll(async () => h.close());

function expectProblem(
  response: { statusCode: number; headers: Record<string, unknown>; body: string },
  status: number,
  code: string,
) {
  expect(response.statusCode).toBe(status);
  expect(String(response.headers['content-type'])).toContain('application/problem+json');
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(body).toMatchObject({
    status,
    code,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
  });
  expect(body.request_id).toBe(response.headers['x-request-id']);
  return body as { errors?: { path: string; message: string }[]; detail: string };
}

describe('GET /api/services query validation', () => {
  it.each([
    ['per_page=101', '/querystring/per_page'],
    ['per_page=0', '/querystring/per_page'],
    ['per_page=abc', '/querystring/per_page'],
    ['page=0', '/querystring/page'],
    ['page=-1', '/querystring/page'],
    ['page=1.5', '/querystring/page'],
    ['status=sleeping', '/querystring/status'],
    ['sort=size', '/querystring/sort'],
    ['order=up', '/querystring/order'],
    ['search=' + 'x'.repeat(101), '/querystring/search'],
    ['colour=blue', '/querystring/colour'],
  ])('%s → 400 naming %s', async (query, path) => {
    const response = await h.app.inject({
      url: `/api/services?${query}`,
      headers: { authorization: admin.auth },
    });
    const body = expectProblem(response, 400, 'validation_failed');
    expect(body.errors?.map((e) => e.path)).toContain(path);
  });

  it('applies defaults page=1 per_page=20', async () => {
    const response = await h.app.inject({ url: '/api/services', headers: { authorization: admin.auth } });
    expect(response.statusCode).toBe(200);
    expect(json(response)).toMatchObject({
      page: 1,
      per_page: 20,
      total: expect.any(Number),
      data: expect.any(Array),
    });
  });
});

describe('query parameters on routes that define none', () => {
  it.each([
    ['GET', '/api/services/{id}?colour=blue'],
    ['GET', '/api/services/{id}/events?colour=blue'],
    ['POST', '/api/services/{id}/restart?force=true'],
    ['DELETE', '/api/services/{id}?cascade=1'],
    ['GET', '/api/templates?colour=blue'],
  ] as const)('%s %s → 400 naming the parameter, nothing done', async (method, template) => {
    const service = await h.createService(admin.auth, { name: uniqueName('q'), customer_id: customerId });
    const response = await h.app.inject({
      method,
      url: template.replace('{id}', service.id),
      headers: { authorization: admin.auth },
    });
    const body = expectProblem(response, 400, 'validation_failed');
    const parameter = new URL(template, 'http://x').searchParams.keys().next().value;
    expect(body.errors?.map((e) => e.path)).toContain(`/querystring/${parameter}`);
    const after = await h.app.inject({
      url: `/api/services/${service.id}`,
      headers: { authorization: admin.auth },
    });
    expect(json<{ status: string }>(after).status).toBe('deploying');
  });
});

describe('POST /api/services body validation', () => {
  const post = (payload: unknown, headers: Record<string, string> = {}) =>
    h.app.inject({
      method: 'POST',
      url: '/api/services',
      headers: { authorization: admin.auth, 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
  const valid = () => ({
    name: uniqueName('svc'),
    customer_id: customerId,
    deploy_method: 'compose',
    compose: COMPOSE_BUSYBOX,
  });

  it.each([
    ['name missing', { name: undefined }, '/body/name'],
    ['name not a string', { name: 123 }, '/body/name'],
    ['name with capitals', { name: 'MyService' }, '/body/name'],
    ['name too short', { name: 'ab' }, '/body/name'],
    ['name too long', { name: 'a'.repeat(64) }, '/body/name'],
    ['name with underscore', { name: 'my_service' }, '/body/name'],
    ['deploy_method missing', { deploy_method: undefined }, '/body/deploy_method'],
    ['deploy_method unknown', { deploy_method: 'ftp' }, '/body/deploy_method'],
    ['customer_id not a string', { customer_id: 5 }, '/body/customer_id'],
    ['customer_id unknown', { customer_id: 'no-such-customer' }, '/body/customer_id'],
    ['compose missing', { compose: undefined }, '/body/compose'],
    ['compose not a string', { compose: { services: {} } }, '/body/compose'],
    ['variables not an object', { variables: 'A=1' }, '/body/variables'],
    ['variable value not a string', { variables: { A: 1 } }, '/body/variables/A'],
    ['unknown field', { colour: 'blue' }, '/body/colour'],
    ['git_url with compose', { git_url: 'https://example.test/x.git' }, '/body/git_url'],
  ])('%s → 400 naming %s', async (_label, patch, path) => {
    const body = { ...valid(), ...patch };
    const response = await post(body);
    const problem = expectProblem(response, 400, 'validation_failed');
    expect(problem.errors?.map((e) => e.path)).toContain(path);
  });

  it.each([
    ['template', { template_id: undefined }, '/body/template_id'],
    ['git', { git_url: undefined }, '/body/git_url'],
    ['ai', { ai_url: undefined }, '/body/ai_url'],
  ])('deploy_method %s without its field → 400 naming %s', async (method, patch, path) => {
    const response = await post({
      name: uniqueName('svc'),
      customer_id: customerId,
      deploy_method: method,
      ...patch,
    });
    const problem = expectProblem(response, 400, 'validation_failed');
    expect(problem.errors?.map((e) => e.path)).toContain(path);
  });

  it.each([
    ['privileged', 'services:\n  web:\n    image: local/busybox:1\n    privileged: true\n', 'privileged'],
    [
      'docker socket bind',
      'services:\n  web:\n    image: local/busybox:1\n    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n',
      'volumes',
    ],
    [
      'host root bind',
      'services:\n  web:\n    image: local/busybox:1\n    volumes:\n      - /:/host\n',
      'volumes',
    ],
    [
      'host network',
      'services:\n  web:\n    image: local/busybox:1\n    network_mode: host\n',
      'network_mode',
    ],
    ['cap_add', 'services:\n  web:\n    image: local/busybox:1\n    cap_add: [SYS_ADMIN]\n', 'cap_add'],
  ])('compose with %s → 400 naming the key', async (_label, compose, key) => {
    const response = await post({ ...valid(), compose });
    const problem = expectProblem(response, 400, 'invalid_compose');
    expect(problem.errors?.some((e) => e.path.includes(key))).toBe(true);
  });

  it('a rejected request stores nothing', async () => {
    const name = uniqueName('svc');
    await post({ ...valid(), name, compose: 'services:\n  web:\n    image: x\n    privileged: true\n' });
    const list = await h.app.inject({
      url: `/api/services?search=${name}`,
      headers: { authorization: admin.auth },
    });
    expect(json(list).total).toBe(0);
  });

  it('malformed JSON → 400 malformed_json', async () => {
    expectProblem(await post('{"name": '), 400, 'malformed_json');
  });

  it('wrong content type → 415', async () => {
    expectProblem(
      await post('name=x', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'unsupported_media_type',
    );
  });

  it('a body over 1 MiB → 413', async () => {
    expectProblem(
      await post({ ...valid(), compose: 'x'.repeat(1024 * 1024 + 10) }),
      413,
      'payload_too_large',
    );
  });

  it('a duplicate live name → 409 name_taken', async () => {
    const body = valid();
    expect((await post(body)).statusCode).toBe(201);
    expectProblem(await post(body), 409, 'name_taken');
  });
});

describe('unknown things', () => {
  it('unknown service id → 404 problem', async () => {
    const response = await h.app.inject({
      url: '/api/services/does-not-exist',
      headers: { authorization: admin.auth },
    });
    expectProblem(response, 404, 'not_found');
  });

  it('unknown route → 404 problem', async () => {
    expectProblem(await h.app.inject({ url: '/api/nothing-here' }), 404, 'not_found');
  });

  it('no credential → 401 with WWW-Authenticate', async () => {
    const response = await h.app.inject({ url: '/api/services' });
    expectProblem(response, 401, 'unauthenticated');
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('a malformed or unknown key → 401', async () => {
    for (const auth of ['Bearer nope', 'Bearer hsk_000000000000000000000000000000000000', 'Basic abc']) {
      expectProblem(
        await h.app.inject({ url: '/api/services', headers: { authorization: auth } }),
        401,
        'unauthenticated',
      );
    }
  });
});
