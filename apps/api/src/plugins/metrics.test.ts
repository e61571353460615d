import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../test-support/harness.js';

// The scrape endpoint operators point Prometheus at: public like /livez, outside /api.
describe('GET /metrics', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h.close());

  it('reports request latency by route template, method and status', async () => {
    const { auth } = await h.user('admin');
    await h.app.inject({ url: '/api/services?per_page=1', headers: { authorization: auth } });
    await h.app.inject({
      url: '/api/services/00000000-0000-0000-0000-000000000000',
      headers: { authorization: auth },
    });
    await h.app.inject({ url: '/no/such/route' });

    const response = await h.app.inject({ url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    const body = response.body;
    expect(body).toContain('# TYPE hostctl_http_request_duration_seconds histogram');
    expect(body).toMatch(
      /hostctl_http_request_duration_seconds_count\{route="\/api\/services",method="GET",status="200"\} 1/,
    );
    expect(body).toMatch(
      /hostctl_http_request_duration_seconds_count\{route="\/api\/services\/:id",method="GET",status="404"\} 1/,
    );
    expect(body).toMatch(
      /hostctl_http_request_duration_seconds_count\{route="unmatched",method="GET",status="404"\} 1/,
    );
    // Raw ids never become label values.
    expect(body).not.toContain('00000000-0000-0000-0000-000000000000');
    expect(body).toContain('process_cpu_user_seconds_total');
  });
});
