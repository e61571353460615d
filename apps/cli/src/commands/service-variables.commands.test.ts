import { describe, expect, it } from 'vitest';
import { fakeApi, problemBody, run, type Handler } from '../test-support/fake-api.js';

const S = '3f1c2a4e-1111-4222-8333-444455556666';
const D = '9a8b7c6d-1111-4222-8333-444455556666';
const SECRET = 'pl4nted-s3cret-value';

const detail = {
  id: S,
  name: 'web',
  variables: { LOG_LEVEL: 'info' },
  secret_variables: { DB_PASSWORD: { set: true, updated_at: '2026-11-28T00:00:00Z' } },
};
const lookup: Record<string, Handler> = {
  'GET /api/services': [200, { data: [{ id: S, name: 'web' }], total: 1, page: 1, per_page: 100 }],
  [`GET /api/services/${S}`]: [200, detail],
};
const patched: Handler = [200, { ...detail, deploy_job_id: D }];
const patchOf = (api: ReturnType<typeof fakeApi>) =>
  api.requests.filter((request) => request.method === 'PATCH');
const bodyOf = (api: ReturnType<typeof fakeApi>, method: string) =>
  JSON.parse(api.requests.find((request) => request.method === method)?.body ?? '{}') as unknown;

describe('services set', () => {
  it('merges plain and secret variables by name, the secret from stdin, and prints names only', async () => {
    const api = fakeApi({ ...lookup, [`PATCH /api/services/${S}`]: patched });
    const result = await run(
      ['services', 'set', 'web', '--var', 'LOG_LEVEL=debug', '--secret-stdin', 'DB_PASSWORD'],
      api.fetchImpl,
      undefined,
      `${SECRET}\n`,
    );
    expect(result).toMatchObject({
      code: 0,
      stdout: `service web: set LOG_LEVEL, DB_PASSWORD; deployment ${D}`,
    });
    expect(bodyOf(api, 'PATCH')).toEqual({
      variables: { LOG_LEVEL: 'debug' },
      secret_variables: { DB_PASSWORD: SECRET },
    });
    expect(`${result.stdout}${result.stderr}`).not.toContain(SECRET);
  });

  it('with nothing to set, or a pair without "=", exits 2 and sends nothing', async () => {
    const api = fakeApi(lookup);
    expect((await run(['services', 'set', 'web'], api.fetchImpl)).code).toBe(2);
    expect((await run(['services', 'set', 'web', '--secret', 'NOVALUE'], api.fetchImpl)).code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });

  it('a plain write over a secret name exits 1 with the API reason and no value echoed', async () => {
    const api = fakeApi({
      ...lookup,
      [`PATCH /api/services/${S}`]: [
        422,
        problemBody(
          422,
          'variable_kind_conflict',
          'Variable both plain and secret',
          '/body/variables/DB_PASSWORD is secret',
        ),
      ],
    });
    const result = await run(['services', 'set', 'web', '--var', `DB_PASSWORD=${SECRET}`], api.fetchImpl);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('/body/variables/DB_PASSWORD is secret');
    expect(`${result.stdout}${result.stderr}`).not.toContain(SECRET);
  });

  it('a token without manage exits 5', async () => {
    const api = fakeApi({
      ...lookup,
      [`PATCH /api/services/${S}`]: [403, problemBody(403, 'forbidden', 'Forbidden', 'key lacks manage')],
    });
    expect((await run(['services', 'set', 'web', '--var', 'A=1'], api.fetchImpl)).code).toBe(5);
  });

  it('--wait follows the deployment the change started and exits with its outcome', async () => {
    const api = fakeApi({
      ...lookup,
      [`PATCH /api/services/${S}`]: patched,
      [`GET /api/deployments/${D}`]: [
        200,
        { id: D, service_id: S, status: 'failed', step: 'start', error: 'exited', logs: [], last_seq: 0 },
      ],
    });
    const result = await run(['services', 'set', 'web', '--var', 'A=1', '--wait'], api.fetchImpl);
    expect(result.code).toBe(1);
    expect(api.requests.some((request) => request.url.pathname === `/api/deployments/${D}`)).toBe(true);
  });
});

describe('services unset', () => {
  it('sorts the names into plain and secret from the detail it read', async () => {
    const api = fakeApi({ ...lookup, [`PATCH /api/services/${S}`]: patched });
    const result = await run(['services', 'unset', 'web', 'LOG_LEVEL', 'DB_PASSWORD'], api.fetchImpl);
    expect(result).toMatchObject({
      code: 0,
      stdout: `service web: removed LOG_LEVEL, DB_PASSWORD; deployment ${D}`,
    });
    expect(bodyOf(api, 'PATCH')).toEqual({
      variables: { LOG_LEVEL: null },
      secret_variables: { DB_PASSWORD: null },
    });
  });

  it('a name the service lacks, or none at all, exits 2 and writes nothing', async () => {
    const api = fakeApi(lookup);
    const unknown = await run(['services', 'unset', 'web', 'LOG_LEVEL', 'NOPE'], api.fetchImpl);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('service web has no variable NOPE');
    expect((await run(['services', 'unset', 'web'], api.fetchImpl)).code).toBe(2);
    expect(patchOf(api)).toHaveLength(0);
  });
});

describe('services reveal', () => {
  it('prints the value alone, for a pipe', async () => {
    const api = fakeApi({
      ...lookup,
      [`POST /api/services/${S}/secret-variables/reveal`]: [
        200,
        { name: 'DB_PASSWORD', value: SECRET, updated_at: '2026-11-28T00:00:00Z' },
      ],
    });
    const result = await run(['services', 'reveal', 'web', 'DB_PASSWORD'], api.fetchImpl);
    expect(result).toMatchObject({ code: 0, stdout: SECRET });
    expect(bodyOf(api, 'POST')).toEqual({ name: 'DB_PASSWORD' });
  });

  it('a name that is not a secret exits 1 (the API 404); a viewer exits 5; no NAME exits 2', async () => {
    const notSecret = fakeApi({
      ...lookup,
      [`POST /api/services/${S}/secret-variables/reveal`]: [
        404,
        problemBody(404, 'not_found', 'Not found', 'no secret variable LOG_LEVEL'),
      ],
    });
    const missing = await run(['services', 'reveal', 'web', 'LOG_LEVEL'], notSecret.fetchImpl);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no secret variable LOG_LEVEL');
    const viewer = fakeApi({
      ...lookup,
      [`POST /api/services/${S}/secret-variables/reveal`]: [
        403,
        problemBody(403, 'forbidden', 'Forbidden', 'viewer'),
      ],
    });
    expect((await run(['services', 'reveal', 'web', 'DB_PASSWORD'], viewer.fetchImpl)).code).toBe(5);
    expect((await run(['services', 'reveal', 'web'], viewer.fetchImpl)).code).toBe(2);
  });
});
