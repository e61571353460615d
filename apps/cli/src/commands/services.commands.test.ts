import { describe, expect, it } from 'vitest';
import { fakeApi, run } from '../test-support/fake-api.js';

const A = '3f1c2a4e-1111-4222-8333-444455556666';
const B = '3f1c2a4e-2222-4222-8333-444455556666';

describe('SERVICE as an id or a name', () => {
  it('resolves a name through the list search, keeping exact matches only', async () => {
    const api = fakeApi({
      'GET /api/services': [
        200,
        {
          data: [
            { id: B, name: 'web-2', status: 'running' },
            { id: A, name: 'web', status: 'running' },
          ],
          total: 2,
          page: 1,
          per_page: 100,
        },
      ],
      [`POST /api/services/${A}/restart`]: [200, { id: A, status: 'running', message: 'Service restarted' }],
    });
    const result = await run(['services', 'restart', 'web'], api.fetchImpl);
    expect(result).toMatchObject({ code: 0, stdout: 'web: Service restarted' });
    expect(api.requests[0]?.url.searchParams.get('search')).toBe('web');
  });

  it('looks an id up directly', async () => {
    const api = fakeApi({ [`GET /api/services/${A}`]: [200, { id: A, name: 'web', variables: {} }] });
    const result = await run(['services', 'get', A, '--json'], api.fetchImpl);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: A, name: 'web' });
  });

  it('exits 2 naming both candidates when a name is ambiguous', async () => {
    const api = fakeApi({
      'GET /api/services': [
        200,
        {
          data: [
            { id: A, name: 'web', customer_id: 'c1' },
            { id: B, name: 'web', customer_id: 'c2' },
          ],
          total: 2,
          page: 1,
          per_page: 100,
        },
      ],
    });
    const result = await run(['deploy', 'web', '--wait'], api.fetchImpl);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`2 services are named "web" (${A} of customer c1, ${B} of customer c2)`);
    expect(api.requests.some((r) => r.method === 'POST')).toBe(false);
  });

  it('exits 2 when no service has that exact name', async () => {
    const api = fakeApi({
      'GET /api/services': [200, { data: [{ id: A, name: 'web-old' }], total: 1, page: 1, per_page: 100 }],
    });
    const result = await run(['deploy', 'web'], api.fetchImpl);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no service named or with id "web" is visible to this token');
  });

  it('reads every page of matches before deciding', async () => {
    const api = fakeApi({
      'GET /api/services': (url) => {
        const page = Number(url.searchParams.get('page'));
        const filler = Array.from({ length: 100 }, (_, i) => ({ id: `x${i}`, name: `web-${i}` }));
        return [
          200,
          { data: page === 1 ? filler : [{ id: A, name: 'web' }], total: 101, page, per_page: 100 },
        ];
      },
      [`POST /api/services/${A}/stop`]: [200, { id: A, status: 'stopped', message: 'Service stopped' }],
    });
    expect((await run(['services', 'stop', 'web'], api.fetchImpl)).code).toBe(0);
  });
});

describe('services commands', () => {
  it('list --json prints the API page as is and passes the filters', async () => {
    const page = { data: [{ id: A, name: 'web', status: 'running' }], total: 1, page: 1, per_page: 20 };
    const api = fakeApi({ 'GET /api/services': [200, page] });
    const result = await run(
      ['services', 'list', '--status', 'running', '--per-page', '20', '--json'],
      api.fetchImpl,
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(page);
    expect(Object.fromEntries(api.requests[0]?.url.searchParams ?? [])).toEqual({
      status: 'running',
      per_page: '20',
    });
  });

  it('get hides variable values in text output', async () => {
    const api = fakeApi({
      [`GET /api/services/${A}`]: [200, { id: A, name: 'web', variables: { DB_PASSWORD: 's3cret-value' } }],
    });
    const result = await run(['services', 'get', A], api.fetchImpl);
    expect(result.stdout).toContain('variables: DB_PASSWORD (values hidden');
    expect(result.stdout).not.toContain('s3cret-value');
  });

  it('create sends the compose file from stdin and the variables', async () => {
    const api = fakeApi({
      'POST /api/services': [
        201,
        { id: A, name: 'web', status: 'deploying', url: 'http://web.apps.test', deploy_job_id: B },
      ],
    });
    const compose = 'services:\n  web:\n    image: local/busybox:1\n';
    const result = await run(
      [
        'services',
        'create',
        '--name',
        'web',
        '--customer',
        'c1',
        '--compose-file',
        '-',
        '--var',
        'A=1',
        '--secret',
        'DB_PASSWORD=s3cret=value',
        '--json',
      ],
      api.fetchImpl,
      undefined,
      compose,
    );
    expect(result.code).toBe(0);
    expect(JSON.parse(api.requests[0]?.body ?? '{}')).toEqual({
      name: 'web',
      customer_id: 'c1',
      deploy_method: 'compose',
      compose,
      variables: { A: '1' },
      secret_variables: { DB_PASSWORD: 's3cret=value' },
    });
  });

  it('get names secret variables, write-only', async () => {
    const api = fakeApi({
      [`GET /api/services/${A}`]: [
        200,
        {
          id: A,
          name: 'web',
          secret_variables: { DB_PASSWORD: { set: true, updated_at: '2026-11-28T00:00:00Z' } },
        },
      ],
    });
    const result = await run(['services', 'get', A], api.fetchImpl);
    expect(result.stdout).toContain('secret_variables: DB_PASSWORD (write-only)');
  });

  it('delete needs --yes and sends nothing without it', async () => {
    const api = fakeApi({
      'GET /api/services': [200, { data: [{ id: A, name: 'web' }], total: 1, page: 1, per_page: 100 }],
      [`DELETE /api/services/${A}`]: [204],
    });
    const refused = await run(['services', 'delete', 'web'], api.fetchImpl);
    expect(refused.code).toBe(2);
    expect(api.requests.some((r) => r.method === 'DELETE')).toBe(false);
    expect((await run(['services', 'delete', 'web', '--yes'], api.fetchImpl)).code).toBe(0);
    expect(api.requests.some((r) => r.method === 'DELETE')).toBe(true);
  });

  it('an unknown command or a typo in an option is a usage error (2)', async () => {
    const api = fakeApi({});
    expect((await run(['servces', 'list'], api.fetchImpl)).code).toBe(2);
    expect((await run(['deploy', 'web', '--wiat'], api.fetchImpl)).code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });
});
