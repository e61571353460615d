import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '@hostctl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../test-support/harness.js';

// The browsable docs in a real Chromium: swagger-ui must load from this origin only and render the
// endpoints of the generated document. The screenshot is kept for a human to look at.
const SCREENSHOT = path.resolve(import.meta.dirname, '../../../../../.data/screenshots/api-docs.png');
let h: Harness;
let browser: Browser;
let baseUrl: string;

beforeAll(async () => {
  h = await createHarness();
  baseUrl = await h.app.listen({ host: '127.0.0.1', port: 0 });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('GET /api/docs in Chromium', () => {
  it('renders every documented endpoint from local assets', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 2400 } });
    const requested: string[] = [];
    const failed: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('requestfailed', (request) => failed.push(request.url()));
    page.on('pageerror', (error) => failed.push(`page error: ${error.message}`));

    await page.goto(`${baseUrl}/api/docs`);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    await expect.poll(() => page.locator('.opblock').count()).toBeGreaterThan(15);

    const paths = await page.locator('.opblock-summary-path').allTextContents();
    const shown = new Set(paths.map((p) => p.replace(/\u200b/g, '').trim()));
    const document = (await (await fetch(`${baseUrl}/api/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    for (const documented of Object.keys(document.paths)) expect(shown, documented).toContain(documented);
    expect(await page.locator('.info .title').textContent()).toContain('hostctl API');

    expect(failed).toEqual([]);
    const foreign = requested.filter((url) => !url.startsWith(baseUrl) && !url.startsWith('data:'));
    expect(foreign, 'requests that left the API origin').toEqual([]);

    mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: false });
    expect(statSync(SCREENSHOT).size).toBeGreaterThan(20_000);
    await page.close();
  });
});
