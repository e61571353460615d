import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, deployedService, uniqueName } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';

/**
 * The day-two controls an operator relies on, driven in the browser against the real stack:
 * deleting only after typing the name, the compose policy's error pointing at its line, a services
 * list view that survives a reload and a shared link, and the theme the user picked.
 */
let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  const context = await newContext(browser, { storageState: await sessionOf(browser, 'operator') });
  page = await context.newPage();
});
afterAll(async () => browser?.close());

describe('deleting a service', () => {
  it('is possible only once the name is typed, and removes the service', async () => {
    const { appUrl } = inject('web');
    const service = await deployedService('acme', 'ui-delete');
    await page.goto(`${appUrl}/services/${service.id}/settings`);
    await settled(page, service.name);
    const confirm = page.getByRole('textbox', { name: /Type the service name/ });
    const remove = page.getByRole('button', { name: 'Delete service' });
    expect(await remove.isDisabled()).toBe(true);
    await confirm.fill(`${service.name}-not`);
    expect(await remove.isDisabled()).toBe(true);
    await confirm.fill(service.name);
    expect(await remove.isEnabled()).toBe(true);
    await screenshot(page, 'delete-confirmed');
    await remove.click();
    await page.waitForURL((url) => url.pathname === '/services');
    await expect
      .poll(async () => (await adminCall('GET', `/api/services/${service.id}`)).status, { timeout: 60_000 })
      .toBe(404);
  });
});

describe('the compose editor', () => {
  it("shows the policy's refusal at its line, and takes the cursor there", async () => {
    const { appUrl } = inject('web');
    await page.goto(`${appUrl}/services/new`);
    await settled(page, 'Create a service');
    await page.getByRole('radio', { name: /^compose/i }).check();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill(uniqueName('ui-refused'));
    await page.getByRole('combobox', { name: 'Customer' }).selectOption({ label: 'acme' });
    const editor = page.getByRole('textbox', { name: 'Compose file' });
    // Line 5 asks for what no tenant may have.
    await editor.fill(
      'services:\n  web:\n    image: local/busybox:1\n    ports: ["8080"]\n    privileged: true\n',
    );
    await page.getByRole('button', { name: 'Create service' }).click();
    const refusal = page.locator('#compose-errors li').filter({ hasText: 'privileged is not allowed' });
    await refusal.waitFor();
    expect(await refusal.innerText()).toContain('services/web/privileged');
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    await refusal.getByRole('button', { name: 'Line 5' }).click();
    // A string, run in the page: this package is typed for Node, without the DOM's types.
    const selected = await page.evaluate(
      `(() => { const area = document.querySelector('.compose-editor textarea');
        return area.value.slice(area.selectionStart, area.selectionEnd); })()`,
    );
    expect(selected).toBe('    privileged: true');
    expect(new URL(page.url()).pathname).toBe('/services/new');
    await screenshot(page, 'compose-refused');
    expect(await axeViolations(page)).toEqual([]);
  });
});

describe('the services list', () => {
  it('keeps status, sort, order and search in the URL: a reload and a shared link show the same view', async () => {
    const { appUrl } = inject('web');
    const prefix = uniqueName('ui-list');
    const first = await deployedService('acme', `${prefix}-a`);
    const second = await deployedService('acme', `${prefix}-b`);
    await page.goto(`${appUrl}/services`);
    await settled(page, 'Services');
    await page.getByRole('combobox', { name: 'Status' }).selectOption('running');
    await page.getByRole('combobox', { name: 'Order' }).selectOption('desc');
    await page.getByRole('searchbox', { name: 'Search' }).fill(prefix);
    await page.waitForURL((url) => url.searchParams.get('search') === prefix);
    const url = new URL(page.url());
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ status: 'running', order: 'desc' });

    const names = () => page.locator('table tbody tr td:first-child').allInnerTexts();
    const expected = [second.name, first.name];
    await expect
      .poll(async () => (await names()).filter((text) => text.startsWith(prefix)))
      .toEqual(expected);

    // The customer column names the customer, not its id.
    const customers = () => page.locator('table tbody tr td:nth-child(4)').allInnerTexts();
    await expect.poll(async () => (await customers()).slice(0, 2)).toEqual(['acme', 'acme']);

    await page.reload();
    await settled(page, 'Services');
    expect(await page.getByRole('combobox', { name: 'Status' }).inputValue()).toBe('running');
    expect(await page.getByRole('combobox', { name: 'Order' }).inputValue()).toBe('desc');
    expect(await page.getByRole('searchbox', { name: 'Search' }).inputValue()).toBe(prefix);
    await expect
      .poll(async () => (await names()).filter((text) => text.startsWith(prefix)))
      .toEqual(expected);

    // The same link opened by someone else (the admin) shows the same view.
    const other = await (
      await newContext(browser, { storageState: await sessionOf(browser, 'admin') })
    ).newPage();
    await other.goto(url.href);
    await settled(other, 'Services');
    expect(await other.getByRole('searchbox', { name: 'Search' }).inputValue()).toBe(prefix);
    await expect
      .poll(async () =>
        (await other.locator('table tbody tr td:first-child').allInnerTexts()).filter((text) =>
          text.startsWith(prefix),
        ),
      )
      .toEqual(expected);
    await other.context().close();
  });
});

describe('the theme', () => {
  it('switches to dark, stays dark after a reload, and passes axe both ways', async () => {
    const { appUrl } = inject('web');
    const context = await newContext(browser, {
      storageState: await sessionOf(browser, 'operator'),
      scheme: 'light',
    });
    const themed = await context.newPage();
    await themed.goto(`${appUrl}/`);
    await settled(themed, 'Overview');
    const toggle = themed.getByRole('button', { name: 'Dark theme' });
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await toggle.click();
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    expect(await themed.evaluate('document.documentElement.dataset.theme')).toBe('dark');
    await themed.reload();
    await settled(themed, 'Overview');
    expect(await themed.evaluate('document.documentElement.dataset.theme')).toBe('dark');
    expect(await themed.getByRole('button', { name: 'Dark theme' }).getAttribute('aria-pressed')).toBe(
      'true',
    );
    expect(await axeViolations(themed)).toEqual([]);
    await themed.getByRole('button', { name: 'Dark theme' }).click();
    expect(await themed.evaluate('document.documentElement.dataset.theme')).toBe('light');
    expect(await axeViolations(themed)).toEqual([]);
    await context.close();
  });
});
