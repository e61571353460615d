import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

// A customer's metered usage as a billing system and the customer read it (docs/metering.md#api):
// closed hours added up per service and hour, day or month, one page or one CSV export.
// The records are written here as the worker's closer writes them (usage-meter.test.ts in
// packages/db holds the closer to the spans).
let h: Harness;
let admin: { auth: string };
let customer: { id: string };
let viewer: { auth: string };
type Svc = { id: string; name: string };
let services: [Svc, Svc];

const day = (n: number, hour = 0) => new Date(Date.UTC(2026, 9, n, hour));

async function record(serviceId: string, start: Date, figures: { seconds: number; deploys?: number }) {
  await h.container.db.$executeRaw`
    INSERT INTO usage_records (service_id, period_start, customer_id, period_end,
      container_seconds, memory_mb_seconds, millicpu_seconds, deploys)
    VALUES (${serviceId}, ${start}, ${customer.id}, ${new Date(start.getTime() + 3_600_000)},
      ${figures.seconds}, ${figures.seconds * 256}, ${figures.seconds * 500}, ${figures.deploys ?? 0})`;
}

const get = (url: string, auth = admin.auth) =>
  h.app.inject({ method: 'GET', url, headers: { authorization: auth } });

interface Report {
  closed_through: string | null;
  data: {
    period_start: string;
    service_id: string;
    service_name: string;
    container_seconds: number;
    cpu_seconds: number;
    deploys: number;
  }[];
  totals: { container_seconds: number; memory_mb_seconds: number; cpu_seconds: number; deploys: number };
  total: number;
}

beforeAll(async () => {
  h = await createHarness();
  admin = await h.user('admin');
  customer = await h.customer();
  const operator = await h.user('operator', customer.id);
  viewer = await h.user('viewer', customer.id);
  const mine = { customer_id: customer.id };
  services = [await h.createService(operator.auth, mine), await h.createService(operator.auth, mine)];
  const [a, b] = services;
  // October 1st: a runs 10:00–12:00 (two hours, one deploy), b 11:00–12:00; October 2nd: a, 09:00.
  await record(a.id, day(1, 10), { seconds: 3600, deploys: 1 });
  await record(a.id, day(1, 11), { seconds: 3600 });
  await record(b.id, day(1, 11), { seconds: 1800 });
  await record(a.id, day(2, 9), { seconds: 7200 });
});
afterAll(async () => h?.close());

const range = `from=${day(1).toISOString()}&to=${day(3).toISOString()}`;

describe('GET /api/customers/:id/usage', () => {
  it('adds the hours up per service and day, with totals over the whole range', async () => {
    const response = await get(`/api/customers/${customer.id}/usage?${range}&granularity=day`, viewer.auth);
    expect(response.statusCode).toBe(200);
    const report = json<Report>(response);
    const [a, b] = services;
    // Ordered by period, then service id.
    const rows = report.data.map((row) => [
      row.period_start,
      row.service_id,
      row.service_name,
      row.container_seconds,
      row.deploys,
    ]);
    const firstDay = [
      [day(1).toISOString(), a.id, a.name, 7200, 1],
      [day(1).toISOString(), b.id, b.name, 1800, 0],
    ].sort((x, y) => String(x[1]).localeCompare(String(y[1])));
    expect(rows).toEqual([...firstDay, [day(2).toISOString(), a.id, a.name, 7200, 0]]);
    expect(report.totals).toEqual({
      container_seconds: 16_200,
      memory_mb_seconds: 16_200 * 256,
      cpu_seconds: 8100,
      deploys: 1,
    });
    expect(report.total).toBe(3);
  });

  it('keeps hours apart at hourly granularity, and pages them', async () => {
    const first = json<Report>(
      await get(`/api/customers/${customer.id}/usage?${range}&granularity=hour&per_page=2`),
    );
    expect(first.total).toBe(4);
    expect(first.data).toHaveLength(2);
    const second = json<Report>(
      await get(`/api/customers/${customer.id}/usage?${range}&granularity=hour&per_page=2&page=2`),
    );
    expect(second.data.map((row) => row.period_start)).toContain(day(2, 9).toISOString());
    // Totals never depend on the page.
    expect(second.totals.container_seconds).toBe(first.totals.container_seconds);
  });

  it('exports the range as one CSV document', async () => {
    const response = await get(`/api/customers/${customer.id}/usage?${range}&granularity=month&format=csv`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/csv/);
    const lines = response.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'period_start,service_id,service_name,container_seconds,memory_mb_seconds,cpu_seconds,deploys',
    );
    expect(lines).toHaveLength(3);
    const [a] = services;
    expect(lines).toContain(
      `${new Date(Date.UTC(2026, 9, 1)).toISOString()},${a.id},${a.name},14400,${14_400 * 256},7200,1`,
    );
  });

  it.each([
    ['from after to', `from=${day(3).toISOString()}&to=${day(1).toISOString()}`, '/querystring/from'],
    [
      'an hourly range over 31 days',
      `from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&granularity=hour`,
      '/querystring/to',
    ],
    ['an unknown granularity', 'granularity=week', '/querystring/granularity'],
    ['a date that is not one', 'from=yesterday', '/querystring/from'],
    // A leap second is valid RFC 3339: read as the second before, here after `to` (now).
    ['a leap second after now', 'from=9999-12-31T23:59:60Z', '/querystring/from'],
  ])('refuses %s with 400 naming the field', async (_label, query, path) => {
    const response = await get(`/api/customers/${customer.id}/usage?${query}`);
    expect(response.statusCode).toBe(400);
    expect(JSON.stringify(json(response))).toContain(path);
  });

  it("never shows another customer's usage, nor whether that customer exists", async () => {
    const other = await h.customer();
    const outsider = await h.user('admin', other.id);
    expect((await get(`/api/customers/${customer.id}/usage?${range}`, outsider.auth)).statusCode).toBe(404);
    expect((await get(`/api/customers/no-such-customer/usage?${range}`)).statusCode).toBe(404);
  });
});
