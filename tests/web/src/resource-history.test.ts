import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, deployedService } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';
import { WEB_DATABASE_URL } from './env.js';

/**
 * A service's resource history on its overview (docs/health-and-resources.md#history), as the
 * customer's viewer finds it: a chart of CPU and memory with the deployment, a caption that says
 * what the chart shows, and the figures in a table.
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

describe('resource history', () => {
  it('charts the last 24 hours with a caption and a data table, and passes axe', async () => {
    const { appUrl } = inject('web');
    const service = await deployedService('acme', 'history');
    // Stopped, so the stack's worker (sampling every 5 s) adds no point of its own to the ones
    // below: a stopped service keeps its history. A sweep that listed it running may still be
    // writing: wait it out, then start from no buckets.
    const stopped = await adminCall('POST', `/api/services/${service.id}/stop`);
    expect(stopped.status).toBe(200);
    await sleep(7000);
    await pool.query('DELETE FROM service_metric_buckets WHERE service_id = $1', [service.id]);
    // Two 15-minute points as the worker's sampler writes them: 3 samples of 40 % CPU and 100 MiB
    // an hour ago, 3 of 10 % and 300 MiB (one restart) half an hour ago, of a 512 MiB limit.
    await pool.query(
      `INSERT INTO service_metric_buckets (service_id, width_s, bucket_start, samples, cpu_sum, cpu_max,
         memory_sum_mb, memory_max_mb, memory_limit_mb, network_rx_bytes, network_tx_bytes, restarts, oom_kills, last_sample_at)
       SELECT $1, 300, date_bin('15 minutes', now() - v.ago, TIMESTAMPTZ '1970-01-01 00:00:00+00'),
              3, v.cpu * 3, v.cpu, v.mb * 3, v.mb, 512, 2048, 1024, v.restarts, 0, now() - v.ago
       FROM (VALUES (interval '60 minutes', 40, 100, 0), (interval '30 minutes', 10, 300, 1))
         AS v(ago, cpu, mb, restarts)`,
      [service.id],
    );

    await page.goto(`${appUrl}/services/${service.id}`);
    await settled(page, service.name);
    const figure = page.locator('figure.history');
    await figure.getByText('CPU averaged 25.0 % of one CPU (peak 40 %)').waitFor();
    expect(await figure.locator('figcaption').textContent()).toBe(
      'CPU averaged 25.0 % of one CPU (peak 40 %); memory peaked at 300 MiB of 512 MiB; 1 restart; 1 deployment (dashed lines).',
    );
    // The chart itself: uPlot's canvas, hidden from assistive technology (the caption says it).
    await figure.locator('.resource-chart canvas').waitFor();

    await figure.getByText('Data table').click();
    const rows = figure.getByRole('row');
    // The header and one row per point.
    expect(await rows.count()).toBe(3);
    expect((await rows.nth(1).getByRole('cell').allTextContents()).map((text) => text.trim())).toEqual([
      '40 / 40',
      '100 / 100',
      '2.0 KiB / 1.0 KiB',
      '0',
    ]);

    await screenshot(page, 'resource-history');
    expect(await axeViolations(page)).toEqual([]);
  });
});
