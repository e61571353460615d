import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, CHATTY_COMPOSE, uniqueName } from './api.js';
import { newContext, screenshot, sessionOf, settled } from './browser.js';

/**
 * Day one and day two as an operator, only through the dashboard: create a service with each of
 * the four methods and watch each deployment live, follow logs, stop, start, redeploy, and make
 * and revoke an API key.
 */
let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  const context = await newContext(browser, { storageState: await sessionOf(browser, 'operator') });
  page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
});
afterAll(async () => browser?.close());

const status = () => page.locator('.deployment-progress [role=status]');

/** Fills the create form for `method`, submits, and waits for the live deployment to succeed. */
async function createThroughForm(method: string, fill: () => Promise<void>): Promise<string> {
  const { appUrl } = inject('web');
  const name = uniqueName(`ui-${method}`);
  await page.goto(`${appUrl}/services/new`);
  await settled(page, 'Create a service');
  await page.getByRole('radio', { name: new RegExp(`^${method}`, 'i') }).check();
  await page.getByRole('textbox', { name: 'Name', exact: true }).fill(name);
  await page.getByRole('combobox', { name: 'Customer' }).selectOption({ label: 'acme' });
  await fill();
  await page.getByRole('button', { name: 'Create service' }).click();
  // The deployments tab follows the new deployment over its WebSocket until it ends.
  await page.waitForURL(/\/services\/[^/]+\/deployments$/);
  await settled(page, name);
  await expect.poll(() => status().innerText(), { timeout: 120_000, interval: 500 }).toMatch(/succeeded/i);
  await expect.poll(() => page.getByRole('region', { name: 'Deployment log' }).innerText()).not.toBe('');
  await screenshot(page, `created-${method}`);
  return new URL(page.url()).pathname.split('/')[2]!;
}

describe('creating a service with each method', () => {
  it('compose: the editor takes the document', async () => {
    await createThroughForm('compose', () =>
      page.getByRole('textbox', { name: /^Compose file/ }).fill(CHATTY_COMPOSE),
    );
  });

  it("template: the catalog's variables are rendered and sent", async () => {
    const id = await createThroughForm('template', async () => {
      await page.getByRole('combobox', { name: 'Template' }).selectOption('static-site');
      await page.getByRole('textbox', { name: /^MESSAGE/ }).fill('made in the browser');
    });
    const service = await adminCall<{ variables: Record<string, string> }>('GET', `/api/services/${id}`);
    expect(service.body.variables).toMatchObject({ MESSAGE: 'made in the browser' });
  });

  it('git: the repository is cloned and built', async () => {
    const { gitBase } = inject('web');
    await createThroughForm('git', () =>
      page.getByRole('textbox', { name: 'Repository URL', exact: true }).fill(`${gitBase}/static-site.git`),
    );
  });

  it('ai: the repository is analysed and deployed', async () => {
    const { gitBase } = inject('web');
    await createThroughForm('ai', () =>
      page.getByRole('textbox', { name: 'Repository URL to analyse' }).fill(`${gitBase}/plain-site.git`),
    );
  });
});

describe('running a service', () => {
  let id: string;

  const serviceStatus = async () =>
    (await adminCall<{ status: string }>('GET', `/api/services/${id}`)).body.status;

  it('follows the logs live', async () => {
    // expect.poll runs only inside a test: the service is created here, not in a hook.
    id = await createThroughForm('compose', () =>
      page.getByRole('textbox', { name: /^Compose file/ }).fill(CHATTY_COMPOSE),
    );
    await page
      .getByRole('navigation', { name: 'Service sections' })
      .getByRole('link', { name: 'Logs' })
      .click();
    const lines = page.getByRole('region', { name: 'Log lines' });
    await expect.poll(() => lines.innerText(), { timeout: 30_000 }).toMatch(/tick \d+/);
    const first = Math.max(
      ...[...(await lines.innerText()).matchAll(/tick (\d+)/g)].map((m) => Number(m[1])),
    );
    // New lines arrive without a reload.
    await expect
      .poll(
        async () =>
          Math.max(...[...(await lines.innerText()).matchAll(/tick (\d+)/g)].map((m) => Number(m[1]))),
        {
          timeout: 30_000,
        },
      )
      .toBeGreaterThan(first);
    await screenshot(page, 'logs-following');
  });

  it('stops, starts and redeploys from the service screen', async () => {
    // Stop asks first, as Delete does: cancelled, nothing happens.
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    const asking = page.getByRole('group', { name: 'Confirm stop' });
    await asking.getByRole('button', { name: 'Cancel' }).click();
    await asking.waitFor({ state: 'detached' });
    expect(await serviceStatus()).toBe('running');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await asking.getByRole('button', { name: 'Stop service' }).click();
    await expect.poll(serviceStatus, { timeout: 60_000 }).toBe('stopped');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await expect.poll(serviceStatus, { timeout: 60_000 }).toBe('running');
    const before = (await adminCall<{ deployed_at: string }>('GET', `/api/services/${id}`)).body.deployed_at;
    await page.getByRole('button', { name: 'Redeploy', exact: true }).click();
    // The click is answered where it was made: a status naming the queued deployment, with a link
    // to the Deployments tab that follows it live (deployed_at moving proves it is a new one).
    const queued = page.getByRole('status').filter({ hasText: /Deployment \S+ queued/ });
    await queued.waitFor();
    await queued.getByRole('link', { name: 'Follow it on the Deployments tab' }).click();
    await page.waitForURL((url) => url.pathname.endsWith('/deployments'));
    await expect.poll(() => status().innerText(), { timeout: 120_000, interval: 500 }).toMatch(/succeeded/i);
    await expect
      .poll(
        async () => (await adminCall<{ deployed_at: string }>('GET', `/api/services/${id}`)).body.deployed_at,
        {
          timeout: 60_000,
        },
      )
      .not.toBe(before);
    await screenshot(page, 'redeployed');
  });
});

describe('API keys', () => {
  it('shows a new key once, and a revoked key stops working', async () => {
    const { appUrl } = inject('web');
    await page.goto(`${appUrl}/api-keys`);
    await settled(page, 'API keys');
    const name = uniqueName('ui-key');
    await page.getByRole('textbox', { name: 'Key name' }).fill(name);
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = await page.getByRole('textbox', { name: 'New API key' }).inputValue();
    expect(shown).toMatch(/^hsk_/);
    const me = () => fetch(`${appUrl}/api/auth/me`, { headers: { authorization: `Bearer ${shown}` } });
    expect((await me()).status).toBe(200);
    await screenshot(page, 'api-key-created');

    await page.reload();
    await settled(page, 'API keys');
    expect(await page.getByRole('textbox', { name: 'New API key' }).count()).toBe(0);
    await page.getByRole('button', { name: `Revoke ${name}` }).click();
    await expect.poll(async () => (await me()).status).toBe(401);
    await expect.poll(() => page.getByRole('button', { name: `Revoke ${name}` }).count()).toBe(0);
  });
});
