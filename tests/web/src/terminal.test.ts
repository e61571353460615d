import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { deployedService } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';
import { WEB_DATABASE_URL } from './env.js';

/**
 * The Terminal tab (docs/dashboard.md, docs/jobs.md#terminal): an operator connects to the real
 * worker's exec in the service's container, types, sees the output and the exit code, and the
 * TTY follows the window's size. A viewer gets the reason, no control, no request and no xterm. A
 * page of another origin on the same site, whose WebSocket carries the operator's cookie, opens
 * nothing (the API's Origin check on upgrades).
 */
let browser: Browser;
let operatorSession: string;
let pool: pg.Pool;

beforeAll(async () => {
  browser = await launchChromium();
  operatorSession = await sessionOf(browser, 'operator');
  pool = new pg.Pool({ connectionString: WEB_DATABASE_URL, max: 1 });
});
afterAll(async () => {
  await pool?.end();
  await browser?.close();
});

const screenText = (page: Page) =>
  page.getByRole('group', { name: 'Terminal' }).locator('.xterm-rows').innerText();
const statusText = (page: Page) =>
  page.getByRole('region', { name: 'Terminal' }).getByRole('status').innerText();

/** What the test reads of an element in the page (this project compiles without the DOM types). */
interface Styled {
  ownerDocument: { defaultView: { getComputedStyle: (element: unknown) => { color: string } } };
}

/** Types a line into the focused terminal, as a person does. */
async function typeLine(page: Page, line: string): Promise<void> {
  await page.keyboard.type(line);
  await page.keyboard.press('Enter');
}

describe('terminal', () => {
  it('connects, runs what is typed, follows the window size and shows the exit code', async () => {
    const { appUrl } = inject('web');
    const service = await deployedService('acme', 'ui-terminal');
    const context = await newContext(browser, { storageState: operatorSession });
    const page = await context.newPage();
    await page.goto(`${appUrl}/services/${service.id}/terminal`);
    await settled(page, service.name);
    expect(await page.getByRole('link', { name: 'Terminal' }).getAttribute('aria-current')).toBe('page');
    await expect.poll(() => statusText(page)).toBe('Not connected.');
    // The release's components, once the deployments are read.
    await expect
      .poll(() => page.getByLabel('Component', { exact: true }).locator('option').allInnerTexts())
      .toContain('web');
    expect(await axeViolations(page)).toEqual([]);

    // From the keyboard: the component, then Connect.
    await page.getByLabel('Component', { exact: true }).focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => statusText(page), { timeout: 30_000 }).toMatch(/^Connected to hostctl-.*web/);
    const input = page.getByRole('textbox', { name: /^Terminal input, web component of / });
    await expect
      .poll(() => input.evaluate((element) => element === element.ownerDocument.activeElement))
      .toBe(true);

    // The echoed command holds $((6*7)); only the shell's answer holds 42.
    await typeLine(page, 'echo hostctl-$((6*7))');
    await expect.poll(() => screenText(page), { timeout: 15_000 }).toContain('hostctl-42');
    // The theme and font xterm writes into <style> elements apply under the dashboard's CSP.
    const rows = page.locator('.xterm-rows');
    expect(
      await rows.evaluate(
        (element) => (element as unknown as Styled).ownerDocument.defaultView.getComputedStyle(element).color,
      ),
    ).toBe('rgb(230, 230, 230)');

    // The TTY takes the screen's size, and a narrower window makes it narrower.
    await typeLine(page, 'echo size:$(stty size)');
    await expect.poll(() => screenText(page)).toMatch(/size:\d+ \d+/);
    const colsOf = async () =>
      [...(await screenText(page)).matchAll(/size:(\d+) (\d+)/g)].map((match) => Number(match[2]));
    const [wide] = await colsOf();
    await page.setViewportSize({ width: 700, height: 800 });
    await expect
      // The new size travels through the API, Redis and the worker to the engine: ask once a second.
      .poll(
        async () => {
          await typeLine(page, 'echo size:$(stty size)');
          return (await colsOf()).at(-1);
        },
        { timeout: 20_000, interval: 1_000 },
      )
      .toBeLessThan(wide ?? 0);
    await screenshot(page, 'terminal-connected');

    await typeLine(page, 'exit 3');
    await expect
      .poll(() => statusText(page), { timeout: 15_000 })
      .toBe('The command ended with exit code 3.');
    expect(await page.getByRole('button', { name: 'Connect again' }).isEnabled()).toBe(true);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);

    const { rows: sessions } = await pool.query<{ exit_code: number | null; container_name: string | null }>(
      'SELECT exit_code, container_name FROM exec_sessions WHERE service_id = $1',
      [service.id],
    );
    expect(sessions).toEqual([{ exit_code: 3, container_name: expect.stringContaining('web') }]);
    await context.close();
  });

  it('tells a viewer why there is no terminal, without a control, a request or the terminal code', async () => {
    const { appUrl } = inject('web');
    const service = await deployedService('acme', 'ui-terminal-viewer');
    const context = await newContext(browser, { storageState: await sessionOf(browser, 'viewer') });
    const viewer = await context.newPage();
    const requested: string[] = [];
    viewer.on('request', (request) => requested.push(request.url()));
    await viewer.goto(`${appUrl}/services/${service.id}/terminal`);
    await settled(viewer, service.name);
    await viewer.getByText(/open to operators and admins only/).waitFor();
    expect(await viewer.getByRole('button', { name: /connect/i }).count()).toBe(0);
    expect(await viewer.locator('.xterm').count()).toBe(0);
    expect(requested.filter((url) => url.includes('/exec') || url.includes('TerminalPanel'))).toEqual([]);
    expect(await axeViolations(viewer)).toEqual([]);
    await context.close();
  });

  it("opens no terminal for another origin's page, though the browser sends the operator's cookie", async () => {
    const { appUrl } = inject('web');
    const service = await deployedService('acme', 'ui-terminal-origin');
    // Same site (127.0.0.1), another port: SameSite=Lax lets the session cookie go with the
    // handshake, as it would from a customer's app on a sibling subdomain.
    const target = `${appUrl.replace(/^http/, 'ws')}/api/services/${service.id}/exec`;
    const page = `<!doctype html><title>pending</title><script>
      const ws = new WebSocket(${JSON.stringify(target)});
      ws.onopen = () => { document.title = 'opened'; };
      ws.onclose = (event) => { if (document.title === 'pending') document.title = 'closed:' + event.code; };
    </script>`;
    const server: Server = createServer((_, response) =>
      response.setHeader('content-type', 'text/html').end(page),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const context = await newContext(browser, { storageState: operatorSession });
    try {
      const foreign = await context.newPage();
      await foreign.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      await expect.poll(() => foreign.title(), { timeout: 15_000 }).toMatch(/^closed:|^opened$/);
      expect(await foreign.title()).toBe('closed:1006');
      const { rows } = await pool.query('SELECT id FROM exec_sessions WHERE service_id = $1', [service.id]);
      expect(rows).toEqual([]);
      // The same cookie from the dashboard's own origin does open the terminal.
      const own = await context.newPage();
      await own.goto(`${appUrl}/services/${service.id}/terminal`);
      await settled(own, service.name);
      await own.getByRole('button', { name: 'Connect', exact: true }).click();
      await expect.poll(() => statusText(own), { timeout: 30_000 }).toMatch(/^Connected to /);
      await own.getByRole('button', { name: 'Disconnect' }).click();
      await expect.poll(() => statusText(own)).toBe('You disconnected the terminal.');
    } finally {
      await context.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
