import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { deployedService } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';
import { WEB_DATABASE_URL } from './env.js';

/**
 * A customer's quotas and this month's usage in the dashboard (docs/quotas.md, docs/metering.md),
 * as the customer's own viewer finds them: from the customers list, a meter per limited quota
 * and a row per service with what it used.
 */
let browser: Browser;
let page: Page;
let pool: pg.Pool;

beforeAll(async () => {
  browser = await launchChromium();
  const context = await newContext(browser, { storageState: await sessionOf(browser, 'viewer') });
  page = await context.newPage();
  pool = new pg.Pool({ connectionString: WEB_DATABASE_URL, max: 1 });
});
afterAll(async () => {
  await pool?.end();
  await browser?.close();
});

describe('usage and quotas', () => {
  it("shows the viewer's own customer's quotas and a closed hour of its service's usage", async () => {
    const { appUrl, customers } = inject('web');
    const service = await deployedService('acme', 'usage');
    // A closed hour as the worker's closer writes it (held to the spans in packages/db's tests):
    // two containers for an hour, 512 MiB and half a CPU each. The hour before this one, kept in
    // this month.
    await pool.query(
      `INSERT INTO usage_records (service_id, period_start, customer_id, period_end,
         container_seconds, memory_mb_seconds, millicpu_seconds, deploys)
       SELECT $1, h, $2, h + interval '1 hour', 7200, 7200 * 512, 7200 * 500, 3
       FROM (SELECT greatest(date_trunc('month', now(), 'UTC'), date_trunc('hour', now()) - interval '1 hour') AS h) t`,
      [service.id, customers.acme],
    );

    await page.goto(`${appUrl}/customers`);
    await settled(page, 'Customers');
    await page.getByRole('link', { name: 'Usage and quotas of acme' }).click();
    await settled(page, 'Usage of acme');

    // The default plan limits containers (100): a meter named after the quota, at the usage.
    const containers = page.getByRole('meter', { name: 'Containers' });
    expect(Number(await containers.getAttribute('max'))).toBe(100);
    expect(Number(await containers.getAttribute('value'))).toBeGreaterThanOrEqual(1);

    const row = page.getByRole('row', { name: new RegExp(service.name) });
    await row.waitFor();
    // 7200 container-seconds = 2 container hours; 7200 × 512 MiB-seconds = 1 GiB-hour; 3600 CPU-seconds = 1.
    expect((await row.getByRole('cell').allTextContents()).map((text) => text.trim())).toEqual([
      '2',
      '1',
      '1',
      '3',
    ]);
    const csv = page.getByRole('link', { name: 'Download by day (CSV)' });
    expect(await csv.getAttribute('href')).toContain(`/api/customers/${customers.acme}/usage?`);

    await screenshot(page, 'usage');
    expect(await axeViolations(page)).toEqual([]);
  });
});
