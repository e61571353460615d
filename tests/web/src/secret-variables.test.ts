import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, deployedService } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';

/**
 * Secret variables in the dashboard (docs/secrets.md#secret-variables): masked, revealed only on
 * request through the audited reveal route, replaced and deleted by an operator; a viewer sees the
 * names and no control.
 */
let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  const context = await newContext(browser, { storageState: await sessionOf(browser, 'operator') });
  page = await context.newPage();
});
afterAll(async () => browser?.close());

describe('secret variables', () => {
  it('shows a secret masked, reveals it on request (audited), and replaces and deletes it', async () => {
    const { appUrl } = inject('web');
    const service = await deployedService('acme', 'ui-secret');
    const planted = `planted-ui-${Date.now().toString(36)}`;
    const set = await adminCall('PATCH', `/api/services/${service.id}`, {
      secret_variables: { DB_PASSWORD: planted },
    });
    expect(set.status).toBe(200);

    await page.goto(`${appUrl}/services/${service.id}/settings`);
    await settled(page, service.name);
    const value = page.getByRole('textbox', { name: 'DB_PASSWORD', exact: true });
    await page.getByRole('heading', { name: 'Secret variables' }).waitFor();
    // Nothing in the page holds the value before it is revealed: the API never sent it.
    expect(await page.content()).not.toContain(planted);
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Reveal DB_PASSWORD' }).click();
    await expect.poll(() => value.inputValue()).toBe(planted);
    await screenshot(page, 'secret-revealed');
    const audit = await adminCall<{ data: { action: string; subject: string | null }[] }>(
      'GET',
      `/api/audit-events?target_id=${service.id}&action=services.secret_variables.reveal`,
    );
    expect(audit.body.data.map((event) => event.subject)).toContain('DB_PASSWORD');
    expect(JSON.stringify(audit.body)).not.toContain(planted);
    await page.getByRole('button', { name: 'Hide DB_PASSWORD' }).click();
    expect(await page.content()).not.toContain(planted);

    await page.getByLabel('New value for DB_PASSWORD').fill('replaced-in-the-browser');
    await page.getByRole('button', { name: 'Replace DB_PASSWORD' }).click();
    await page.getByRole('status').filter({ hasText: 'Secret saved' }).waitFor();
    const revealed = await adminCall<{ value: string }>(
      'POST',
      `/api/services/${service.id}/secret-variables/reveal`,
      { name: 'DB_PASSWORD' },
    );
    expect(revealed.body.value).toBe('replaced-in-the-browser');

    await page.getByRole('button', { name: 'Delete DB_PASSWORD' }).click();
    await page.getByText('No secret variables.').waitFor();
    const detail = await adminCall<{ secret_variables: object }>('GET', `/api/services/${service.id}`);
    expect(detail.body.secret_variables).toEqual({});
    expect(await axeViolations(page)).toEqual([]);
  });

  it('lets a viewer see the names only', async () => {
    const { appUrl } = inject('web');
    const service = await deployedService('acme', 'ui-secret-viewer');
    await adminCall('PATCH', `/api/services/${service.id}`, {
      secret_variables: { API_TOKEN: 'viewer-never-sees' },
    });
    const viewer = await (
      await newContext(browser, { storageState: await sessionOf(browser, 'viewer') })
    ).newPage();
    await viewer.goto(`${appUrl}/services/${service.id}/settings`);
    await settled(viewer, service.name);
    await viewer.getByRole('textbox', { name: 'API_TOKEN', exact: true }).waitFor();
    expect(await viewer.getByRole('button', { name: 'Reveal API_TOKEN' }).count()).toBe(0);
    expect(await viewer.content()).not.toContain('viewer-never-sees');
    await viewer.context().close();
  });
});
