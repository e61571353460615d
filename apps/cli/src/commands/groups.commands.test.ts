import { describe, expect, it } from 'vitest';
import { fakeApi, problemBody, run, type Handler } from '../test-support/fake-api.js';

const G = '7a1c2a4e-1111-4222-8333-444455556666';
const G2 = '7a1c2a4e-2222-4222-8333-444455556666';
const S = '3f1c2a4e-1111-4222-8333-444455556666';

const group = (id: string, name: string, extra: object = {}) => ({
  id,
  customer_id: 'c1',
  name,
  version: 3,
  created_at: '2026-11-28T00:00:00Z',
  updated_at: '2026-11-28T00:00:00Z',
  ...extra,
});
const detail = group(G, 'shared', {
  variables: { SMTP_HOST: 'smtp.example.test' },
  secret_variables: { SMTP_PASSWORD: { set: true, updated_at: '2026-11-28T00:00:00Z' } },
});
const listing = (...rows: object[]) =>
  [200, { data: rows, total: rows.length, page: 1, per_page: 100 }] as const;
const updated = (version: number) =>
  [200, { ...detail, version, affected_services: [{ id: S, name: 'web' }] }] as const;
const bodyOf = (api: ReturnType<typeof fakeApi>, method: string) =>
  JSON.parse(api.requests.find((request) => request.method === method)?.body ?? '{}') as unknown;

describe('groups: reading', () => {
  it('list --json prints the API page and passes the customer filter', async () => {
    const api = fakeApi({ 'GET /api/variable-groups': [...listing(group(G, 'shared'))] });
    const result = await run(['groups', 'list', '--customer', 'c1', '--json'], api.fetchImpl);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ data: [{ id: G, name: 'shared' }], total: 1 });
    expect(api.requests[0]?.url.searchParams.get('customer_id')).toBe('c1');
  });

  it('get by name names variables and services, never a value', async () => {
    const api = fakeApi({
      'GET /api/variable-groups': [...listing(group(G2, 'shared-2'), group(G, 'shared'))],
      [`GET /api/variable-groups/${G}`]: [200, detail],
      [`GET /api/variable-groups/${G}/services`]: [200, { data: [{ id: S, name: 'web' }] }],
    });
    const result = await run(['groups', 'get', 'shared'], api.fetchImpl);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('variables: SMTP_HOST (values hidden');
    expect(result.stdout).toContain('secret_variables: SMTP_PASSWORD (write-only');
    expect(result.stdout).toContain('services: web');
    expect(result.stdout).not.toContain('smtp.example.test');
  });

  it('exits 2 naming both when two customers have a group of that name', async () => {
    const api = fakeApi({
      'GET /api/variable-groups': [
        ...listing(group(G, 'shared'), group(G2, 'shared', { customer_id: 'c2' })),
      ],
    });
    const result = await run(['groups', 'delete', 'shared', '--yes'], api.fetchImpl);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `2 variable groups are named "shared" (${G} of customer c1, ${G2} of customer c2)`,
    );
    expect(api.requests.some((request) => request.method === 'DELETE')).toBe(false);
  });

  it('reveal prints the value alone, for a pipe', async () => {
    const api = fakeApi({
      [`GET /api/variable-groups/${G}`]: [200, detail],
      [`POST /api/variable-groups/${G}/secret-variables/reveal`]: [
        200,
        { name: 'SMTP_PASSWORD', value: 's3cret', updated_at: '2026-11-28T00:00:00Z' },
      ],
    });
    const result = await run(['groups', 'reveal', G, 'SMTP_PASSWORD'], api.fetchImpl);
    expect(result).toMatchObject({ code: 0, stdout: 's3cret' });
    expect(bodyOf(api, 'POST')).toEqual({ name: 'SMTP_PASSWORD' });
  });
});

describe('groups: changing', () => {
  it('create sends variables, a secret from stdin and the idempotency key', async () => {
    const api = fakeApi({ 'POST /api/variable-groups': [201, group(G, 'shared', { version: 1 })] });
    const result = await run(
      [
        'groups',
        'create',
        '--name',
        'shared',
        '--customer',
        'c1',
        '--var',
        'A=1',
        '--secret-stdin',
        'TOKEN',
        '--idempotency-key',
        'k1',
      ],
      api.fetchImpl,
      undefined,
      'from-stdin\n',
    );
    expect(result).toMatchObject({ code: 0, stdout: `variable group shared (${G}) created, version 1` });
    expect(bodyOf(api, 'POST')).toEqual({
      name: 'shared',
      customer_id: 'c1',
      variables: { A: '1' },
      secret_variables: { TOKEN: 'from-stdin' },
    });
    expect(api.requests[0]?.idempotencyKey).toBe('k1');
  });

  it('set merges; --if-version sends If-Match and a 412 exits 1 with the API reason', async () => {
    const api = fakeApi({
      [`GET /api/variable-groups/${G}`]: [200, detail],
      [`PATCH /api/variable-groups/${G}`]: (_url, call) =>
        call === 1
          ? [...updated(4)]
          : [
              412,
              problemBody(
                412,
                'precondition_failed',
                'Precondition failed',
                'If-Match "3" does not name the current version',
              ),
            ],
    });
    const merged = await run(
      ['groups', 'set', G, '--var', 'SMTP_PORT=587', '--secret', 'KEY=v'],
      api.fetchImpl,
    );
    expect(merged).toMatchObject({ code: 0, stdout: 'variable group shared is now version 4' });
    expect(merged.stderr).toContain('at their next deployment: web (hostctl groups redeploy shared)');
    expect(bodyOf(api, 'PATCH')).toEqual({ variables: { SMTP_PORT: '587' }, secret_variables: { KEY: 'v' } });
    expect(api.requests.find((request) => request.method === 'PATCH')?.ifMatch).toBeNull();

    const stale = await run(['groups', 'set', G, '--var', 'A=1', '--if-version', '3'], api.fetchImpl);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('does not name the current version');
    expect(api.requests.filter((request) => request.method === 'PATCH')[1]?.ifMatch).toBe('"3"');
  });

  it('set with nothing to set is a usage error and sends nothing', async () => {
    const api = fakeApi({});
    expect((await run(['groups', 'set', G], api.fetchImpl)).code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });

  it('unset sorts names into plain and secret, conditional on the version read', async () => {
    const api = fakeApi({
      [`GET /api/variable-groups/${G}`]: [200, detail],
      [`PATCH /api/variable-groups/${G}`]: [...updated(4)],
    });
    const result = await run(['groups', 'unset', G, 'SMTP_HOST', 'SMTP_PASSWORD'], api.fetchImpl);
    expect(result.code).toBe(0);
    expect(bodyOf(api, 'PATCH')).toEqual({
      variables: { SMTP_HOST: null },
      secret_variables: { SMTP_PASSWORD: null },
    });
    expect(api.requests.find((request) => request.method === 'PATCH')?.ifMatch).toBe('"3"');
  });

  it('unset of a name the group lacks exits 2 and writes nothing', async () => {
    const api = fakeApi({ [`GET /api/variable-groups/${G}`]: [200, detail] });
    const result = await run(['groups', 'unset', G, 'NOPE'], api.fetchImpl);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('variable group shared has no variable NOPE');
    expect(api.requests.some((request) => request.method === 'PATCH')).toBe(false);
  });

  it('delete needs --yes; a 409 (still attached) exits 1 naming the services', async () => {
    const api = fakeApi({
      [`GET /api/variable-groups/${G}`]: [200, detail],
      [`DELETE /api/variable-groups/${G}`]: [
        409,
        problemBody(409, 'conflict', 'Conflict', `attached to web (${S})`),
      ],
    });
    expect((await run(['groups', 'delete', G], api.fetchImpl)).code).toBe(2);
    expect(api.requests.some((request) => request.method === 'DELETE')).toBe(false);
    const refused = await run(['groups', 'delete', G, '--yes'], api.fetchImpl);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`attached to web (${S})`);
  });
});

describe('groups: attaching to a service', () => {
  const answer = (attached: string[], deployment: string | null) =>
    [200, { service_id: S, variable_groups: attached, deploy_job_id: deployment }] as const;
  const routes = (verb: 'attach' | 'detach', attached: string[], deployment: string | null) =>
    ({
      [`GET /api/variable-groups/${G}`]: [200, detail],
      [`GET /api/services/${S}`]: [200, { id: S, name: 'web', variable_groups: [] }],
      [`POST /api/variable-groups/${G}/${verb}`]: [...answer(attached, deployment)],
    }) as Record<string, Handler>;
  const sent = (api: ReturnType<typeof fakeApi>) => api.requests.find((request) => request.method === 'POST');

  it('attach sends one request with --position and --if-version as If-Match', async () => {
    let api = fakeApi(routes('attach', [G2, G], 'd1'));
    expect((await run(['groups', 'attach', G, S], api.fetchImpl)).code).toBe(0);
    expect(bodyOf(api, 'POST')).toEqual({ service_id: S });
    api = fakeApi(routes('attach', [G, G2], 'd1'));
    const first = await run(
      ['groups', 'attach', G, S, '--position', '1', '--if-version', '3'],
      api.fetchImpl,
    );
    expect(first.stdout).toBe('shared attached to web at position 1 of 2; deployment d1');
    expect(bodyOf(api, 'POST')).toEqual({ service_id: S, position: 1 });
    expect(sent(api)?.ifMatch).toBe('"3"');
  });

  it('attach where it already is says nothing changed (no deployment)', async () => {
    const api = fakeApi(routes('attach', [G2, G], null));
    const result = await run(['groups', 'attach', G, S], api.fetchImpl);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('shared is already at that position in web; nothing changed');
  });

  it('detach sends one request; not attached is a no-op; a 412 exits 1 with the reason', async () => {
    let api = fakeApi(routes('detach', [G2], 'd2'));
    const done = await run(['groups', 'detach', G, S], api.fetchImpl);
    expect(done.stdout).toBe('shared detached from web; deployment d2');
    expect(bodyOf(api, 'POST')).toEqual({ service_id: S });
    api = fakeApi(routes('detach', [G2], null));
    const noop = await run(['groups', 'detach', G, S], api.fetchImpl);
    expect(noop.code).toBe(0);
    expect(noop.stderr).toContain('not attached');
    api = fakeApi({
      ...routes('detach', [], null),
      [`POST /api/variable-groups/${G}/detach`]: [
        412,
        problemBody(412, 'precondition_failed', 'Precondition Failed', 'not the current version'),
      ],
    });
    const stale = await run(['groups', 'detach', G, S, '--if-version', '2'], api.fetchImpl);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('not the current version');
  });
});
