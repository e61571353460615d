import { createServiceMetricsStore, type MetricSample } from '@hostctl/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

// A service's resource history as the dashboard's chart and a customer's script read it
// (docs/health-and-resources.md#history): points merged to the asked resolution, the deployments
// of the range as annotations, scoped like the service detail. The buckets are written here as
// the worker's sampler writes them (service-history.test.ts in packages/db holds their upsert).
let h: Harness;
let admin: { auth: string };
let viewer: { auth: string };
let service: { id: string; name: string };

const T0 = new Date('2026-10-05T10:00:00.000Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

const sample = (values: Partial<MetricSample>): MetricSample => ({
  serviceId: service.id,
  cpuPercent: 0,
  memoryMb: 0,
  memoryLimitMb: 256,
  networkRxBytes: 0,
  networkTxBytes: 0,
  restarts: 0,
  oomKills: 0,
  ...values,
});

const get = (url: string, auth = admin.auth) =>
  h.app.inject({ method: 'GET', url, headers: { authorization: auth } });

interface Series {
  resolution: string;
  points: {
    t: string;
    samples: number;
    cpu_percent_avg: number;
    cpu_percent_max: number;
    memory_mb_avg: number;
    network_rx_bytes: number;
    restarts: number;
    oom_kills: number;
    memory_limit_mb: number;
  }[];
  annotations: { type: string; deployment_id: string; status: string; at: string }[];
}

beforeAll(async () => {
  h = await createHarness();
  admin = await h.user('admin');
  const customer = await h.customer();
  const operator = await h.user('operator', customer.id);
  viewer = await h.user('viewer', customer.id);
  service = await h.createService(operator.auth, { customer_id: customer.id });
  const store = createServiceMetricsStore(h.container.db);
  // 10:00 bucket: one busy sample; 10:05 bucket: three idle ones with a restart (an OOM kill).
  await store.recordSamples(at(0), [sample({ cpuPercent: 80, memoryMb: 200, networkRxBytes: 500 })]);
  for (const minute of [5, 6, 7])
    await store.recordSamples(at(minute), [sample({ cpuPercent: 0, memoryMb: 100, networkRxBytes: 100 })]);
  await store.recordSamples(at(8), [sample({ restarts: 1, oomKills: 1 })]);
});
afterAll(async () => h?.close());

const range = `from=${at(0).toISOString()}&to=${at(60).toISOString()}`;

describe('GET /api/services/:id/metrics', () => {
  it('gives the 5-minute points as stored, to the service customer viewer', async () => {
    const response = await get(`/api/services/${service.id}/metrics?${range}`, viewer.auth);
    expect(response.statusCode).toBe(200);
    const series = json<Series>(response);
    expect(series.resolution).toBe('5m');
    expect(series.points).toEqual([
      expect.objectContaining({
        t: at(0).toISOString(),
        samples: 1,
        cpu_percent_avg: 80,
        memory_mb_avg: 200,
        network_rx_bytes: 500,
      }),
      expect.objectContaining({
        t: at(5).toISOString(),
        samples: 4,
        cpu_percent_avg: 0,
        memory_mb_avg: 75,
        restarts: 1,
        oom_kills: 1,
      }),
    ]);
  });

  it('merges buckets by samples, not by averaging averages', async () => {
    const series = json<Series>(await get(`/api/services/${service.id}/metrics?${range}&resolution=15m`));
    // 80 % in one sample and 0 % in four: 16 % (averaging the two buckets would say 40 %).
    expect(series.points).toEqual([
      expect.objectContaining({
        t: at(0).toISOString(),
        samples: 5,
        cpu_percent_avg: 16,
        cpu_percent_max: 80,
        memory_mb_avg: 100,
        network_rx_bytes: 800,
        restarts: 1,
        memory_limit_mb: 256,
      }),
    ]);
    const hourly = json<Series>(await get(`/api/services/${service.id}/metrics?${range}&resolution=1h`));
    expect(hourly.points).toEqual([
      expect.objectContaining({ t: at(0).toISOString(), samples: 5, cpu_percent_avg: 16 }),
    ]);
  });

  it('annotates the deployments queued in the range', async () => {
    const now = Date.now();
    const around = `from=${new Date(now - 3_600_000).toISOString()}&to=${new Date(now + 60_000).toISOString()}`;
    const series = json<Series>(await get(`/api/services/${service.id}/metrics?${around}`));
    expect(series.annotations).toEqual([
      expect.objectContaining({ type: 'deployment', deployment_id: expect.any(String) as string }),
    ]);
    expect(json<Series>(await get(`/api/services/${service.id}/metrics?${range}`)).annotations).toEqual([]);
  });

  it.each([
    ['from after to', `from=${at(60).toISOString()}&to=${at(0).toISOString()}`, '/querystring/from'],
    [
      'a 5-minute range over 8 days',
      'from=2026-01-01T00:00:00Z&to=2026-01-10T00:00:00Z&resolution=5m',
      '/querystring/to',
    ],
    [
      'an hourly range over 35 days',
      'from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&resolution=1h',
      '/querystring/to',
    ],
    ['a `to` whose day before is year 0, without `from`', 'to=0001-01-01T00:00:00Z', '/querystring/to'],
    ['an unknown resolution', 'resolution=2m', '/querystring/resolution'],
    ['a date that is not one', 'from=yesterday', '/querystring/from'],
    ['an unknown parameter', 'step=60', 'step'],
  ])('refuses %s with 400 naming the field', async (_label, query, path) => {
    const response = await get(`/api/services/${service.id}/metrics?${query}`);
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toContain('application/problem+json');
    expect(JSON.stringify(json(response))).toContain(path);
  });

  it("never shows another customer's service, nor whether it exists", async () => {
    const other = await h.customer();
    const outsider = await h.user('admin', other.id);
    expect((await get(`/api/services/${service.id}/metrics?${range}`, outsider.auth)).statusCode).toBe(404);
    expect((await get(`/api/services/${service.id}/metrics?resolution=2m`, outsider.auth)).statusCode).toBe(
      400,
    );
    expect((await get(`/api/services/no-such-service/metrics?${range}`)).statusCode).toBe(404);
  });

  it('reads the first day of year 1, the earliest the API takes', async () => {
    const response = await get(
      `/api/services/${service.id}/metrics?from=0001-01-01T00:00:00Z&to=0001-01-02T00:00:00Z`,
    );
    expect(response.statusCode).toBe(200);
    expect(json(response)).toMatchObject({ points: [], annotations: [] });
  });
});
