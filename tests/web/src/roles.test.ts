import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, CHATTY_COMPOSE, uniqueName } from './api.js';
import { control, devAccount, newContext, screenshot, settled, signIn, type DevRole } from './browser.js';

/**
 * Each dev user signs in through the dev OIDC provider and gets the dashboard their role allows:
 * the navigation follows GET /api/auth/me, a viewer sees no mutating control, and a
 * customer-scoped user never sees another customer's service.
 */
let browser: Browser;
const services: Record<'acme' | 'globex', { id: string; name: string }> = {} as never;

/** Every control that changes something (the accessibility contract's names). */
const MUTATING = [
  'Deploy',
  'Redeploy',
  'Stop',
  'Start',
  'Restart',
  'Rollback',
  'Cancel deployment',
  'Delete service',
  'Create service',
  'Save',
  'Back up now',
  'Set a schedule',
  'Edit schedule',
  'Remove schedule',
];

async function create(customer: 'acme' | 'globex'): Promise<{ id: string; name: string }> {
  const name = uniqueName(`roles-${customer}`);
  const created = await adminCall<{ id: string }>('POST', '/api/services', {
    name,
    customer_id: inject('web').customers[customer],
    deploy_method: 'compose',
    compose: CHATTY_COMPOSE,
  });
  expect(created.status).toBe(201);
  return { id: created.body.id, name };
}

beforeAll(async () => {
  browser = await launchChromium();
  services.acme = await create('acme');
  services.globex = await create('globex');
});
afterAll(async () => browser?.close());

// The platform's certificates are for platform-wide roles only: the dev viewer belongs to acme.
const NAV: Record<DevRole, string[]> = {
  admin: [
    'Overview',
    'Services',
    'Variable groups',
    'Create',
    'API keys',
    'Customers',
    'Users',
    'Certificates',
  ],
  operator: ['Overview', 'Services', 'Variable groups', 'Create', 'API keys', 'Customers', 'Certificates'],
  viewer: ['Overview', 'Services', 'Variable groups', 'API keys', 'Customers'],
};

async function navLinks(page: Page): Promise<string[]> {
  const nav = page.getByRole('navigation', { name: 'Main' });
  return (await nav.getByRole('link').allInnerTexts()).map((text) => text.trim());
}

async function visibleMutating(page: Page): Promise<string[]> {
  const shown: string[] = [];
  for (const name of MUTATING) {
    const control = page
      .getByRole('button', { name, exact: true })
      .or(page.getByRole('link', { name, exact: true }));
    if ((await control.count()) > 0 && (await control.first().isVisible())) shown.push(name);
  }
  return shown;
}

describe.each(['admin', 'operator', 'viewer'] as const)('%s', (role) => {
  it('signs in from a deep link, comes back to it, and sees the navigation of the role', async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    await signIn(page, role, '/services');
    expect(new URL(page.url()).pathname).toBe('/services');
    await settled(page, 'Services');
    expect(await navLinks(page)).toEqual(NAV[role]);
    await expect.poll(() => page.locator('header').innerText()).toContain(devAccount(role).name);
    await screenshot(page, `signed-in-${role}`);

    // The dev provider offers RP-initiated logout: the dashboard ends its session too, the
    // provider asks, then sends the browser back to the dashboard.
    const { issuer, appUrl } = inject('web');
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${issuer}/session/end`)),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(appUrl)),
      page.click('button[name=logout]'),
    ]);
    await control(page, 'Sign in').waitFor();
    const me = await page.evaluate(async () => (await fetch('/api/auth/me')).status);
    expect(me).toBe(401);
    await context.close();
  });
});

describe('viewer of acme', () => {
  let page: Page;
  beforeAll(async () => {
    const context = await newContext(browser);
    page = await context.newPage();
    await signIn(page, 'viewer', '/services');
    await settled(page, 'Services');
  });
  afterAll(async () => page?.context().close());

  it("lists acme's services and never globex's, even searched for or opened by address", async () => {
    const { appUrl } = inject('web');
    await expect.poll(() => page.getByRole('link', { name: services.acme.name }).count()).toBe(1);
    expect(await page.getByText(services.globex.name).count()).toBe(0);

    await page.goto(`${appUrl}/services?q=${encodeURIComponent(services.globex.name)}`);
    await settled(page, 'Services');
    expect(await page.getByText(services.globex.name).count()).toBe(0);

    await page.goto(`${appUrl}/services/${services.globex.id}`);
    const alert = page.getByRole('alert');
    await alert.first().waitFor();
    expect(await alert.first().innerText()).toMatch(/not found/i);
    expect(await page.getByText(services.globex.name).count()).toBe(0);
    await screenshot(page, 'viewer-other-customer');
  });

  it('sees no mutating control on any screen of a service, and cannot create one', async () => {
    const { appUrl } = inject('web');
    const shown: Record<string, string[]> = {};
    for (const tab of ['', '/deployments', '/logs', '/jobs', '/backups', '/events', '/settings']) {
      await page.goto(`${appUrl}/services/${services.acme.id}${tab}`);
      await settled(page, services.acme.name);
      const found = await visibleMutating(page);
      if (found.length > 0) shown[tab || '/'] = found;
      // Settings: values are shown, never editable.
      if (tab === '/settings')
        expect(
          await page
            .locator(
              'main input:not([disabled]):not([readonly]):not([type=search]), main textarea:not([readonly])',
            )
            .count(),
        ).toBe(0);
    }
    expect(shown).toEqual({});
    await page.goto(`${appUrl}/services/new`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    expect(await visibleMutating(page)).toEqual([]);
    await screenshot(page, 'viewer-create');
  });
});
