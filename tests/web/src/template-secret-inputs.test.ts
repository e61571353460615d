import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, uniqueName } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';

/**
 * The create form of a template service (issue 30): a variable the template declares secret (a
 * password the service keeps as a secret variable) is typed into a password input with an
 * accessible Show toggle; the template's other variables stay plain text; what was typed is what
 * the service keeps, as a secret.
 */
let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  const context = await newContext(browser, { storageState: await sessionOf(browser, 'operator') });
  page = await context.newPage();
});
afterAll(async () => browser?.close());

const inputType = (label: string) =>
  page.getByLabel(label, { exact: true }).evaluate((input) => (input as unknown as { type: string }).type);

describe('template settings in the create form', () => {
  it('masks a secret variable behind a Show toggle, keeps the others plain, and the typed value is the secret', async () => {
    const { appUrl } = inject('web');
    const name = uniqueName('ui-tpl-secret');
    const typed = `typed-${Date.now().toString(36)}-password`;
    await page.goto(`${appUrl}/services/new`);
    await settled(page, 'Create a service');
    await page.getByRole('radio', { name: /^template/i }).check();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill(name);
    await page.getByRole('combobox', { name: 'Customer' }).selectOption({ label: 'acme' });
    await page.getByRole('combobox', { name: 'Template' }).selectOption('postgres');

    const password = page.getByLabel('POSTGRES_PASSWORD', { exact: true });
    expect(await inputType('POSTGRES_PASSWORD')).toBe('password');
    expect(await inputType('POSTGRES_USER')).toBe('text');
    expect(await inputType('POSTGRES_DB')).toBe('text');
    // Only secrets get a toggle.
    await expect.poll(() => page.getByRole('button', { name: /^Show / }).count()).toBe(1);

    await password.fill(typed);
    const toggle = page.getByRole('button', { name: 'Show POSTGRES_PASSWORD' });
    expect(await toggle.getAttribute('aria-pressed')).toBe('false');
    await toggle.click();
    expect(await inputType('POSTGRES_PASSWORD')).toBe('text');
    expect(await toggle.getAttribute('aria-pressed')).toBe('true');
    expect(await password.inputValue()).toBe(typed);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'template-secret-shown');
    await toggle.click();
    expect(await inputType('POSTGRES_PASSWORD')).toBe('password');
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Create service' }).click();
    await page.waitForURL(/\/services\/[^/]+\/deployments$/);
    const id = new URL(page.url()).pathname.split('/')[2]!;
    try {
      // The value reached the API as typed and the service keeps it as a secret, not a plain variable.
      const detail = await adminCall<{ variables: Record<string, string>; secret_variables: object }>(
        'GET',
        `/api/services/${id}`,
      );
      expect(Object.keys(detail.body.secret_variables)).toContain('POSTGRES_PASSWORD');
      expect(detail.body.variables).not.toHaveProperty('POSTGRES_PASSWORD');
      const revealed = await adminCall<{ value: string }>(
        'POST',
        `/api/services/${id}/secret-variables/reveal`,
        {
          name: 'POSTGRES_PASSWORD',
        },
      );
      expect(revealed.body.value).toBe(typed);
    } finally {
      // postgres:16 is not on this machine: its deployment is not the point, the service goes.
      await adminCall('DELETE', `/api/services/${id}`);
    }
  });
});
