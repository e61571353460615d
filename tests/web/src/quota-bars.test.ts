import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, CHATTY_COMPOSE, uniqueName } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';

/**
 * The quota bars of a customer's usage page (docs/quotas.md, docs/dashboard.md): the operator
 * sets a customer's quotas through the API, the customer uses them, and the unscoped admin reads,
 * from the customers list, a meter per limited quota with its figures in words, "unlimited" where
 * there is no limit, and the quotas at or over their limit flagged in text. Another customer's
 * viewer gets the API's refusal, not the bars.
 */
let browser: Browser;
let admin: Page;
let viewer: Page;

beforeAll(async () => {
  browser = await launchChromium();
  const [adminState, viewerState] = [await sessionOf(browser, 'admin'), await sessionOf(browser, 'viewer')];
  admin = await (await newContext(browser, { storageState: adminState })).newPage();
  viewer = await (await newContext(browser, { storageState: viewerState })).newPage();
});
afterAll(async () => {
  await browser?.close();
});

async function arranged<T>(call: Promise<{ status: number; body: T }>, expected: number): Promise<T> {
  const answer = await call;
  if (answer.status !== expected) throw new Error(`${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** A fresh customer with one compose service (one container) and the quota overrides given last. */
async function customerAtItsLimits(): Promise<{ id: string; name: string }> {
  const name = uniqueName('quota');
  const customer = await arranged(adminCall<{ id: string }>('POST', '/api/customers', { name }), 201);
  const quotaPath = `/api/customers/${customer.id}/quota`;
  await arranged(
    adminCall('PUT', quotaPath, { plan: 'default', overrides: { services: 1, containers: 5 } }),
    200,
  );
  await arranged(
    adminCall('POST', '/api/services', {
      name: uniqueName('quota-svc'),
      customer_id: customer.id,
      deploy_method: 'compose',
      compose: CHATTY_COMPOSE,
    }),
    201,
  );
  // Lowered below usage after the deploy was counted: over the limit, which only an operator's
  // change can cause (a request that would pass a limit is refused).
  await arranged(
    adminCall('PUT', quotaPath, {
      plan: 'default',
      overrides: { services: 1, containers: 5, deploys_per_hour: 0, memory_mb: null },
    }),
    200,
  );
  return { id: customer.id, name };
}

describe('quota bars', () => {
  it('shows each quota against its limit, unlimited as such, and the full ones flagged in words', async () => {
    const { appUrl } = inject('web');
    const customer = await customerAtItsLimits();

    await admin.goto(`${appUrl}/customers`);
    await settled(admin, 'Customers');
    await admin.getByRole('link', { name: `Usage and quotas of ${customer.name}` }).click();
    await settled(admin, `Usage of ${customer.name}`);

    const meter = (name: string) => admin.getByRole('meter', { name, exact: true });
    const figures = async (name: string) => {
      const found = meter(name);
      return {
        value: Number(await found.getAttribute('value')),
        max: Number(await found.getAttribute('max')),
        text: await found.getAttribute('aria-valuetext'),
      };
    };
    const row = (quota: string) => admin.locator(`li[data-quota="${quota}"]`);

    expect(await figures('Services')).toEqual({ value: 1, max: 1, text: '1 of 1 service, at the limit' });
    expect(await row('services').innerText()).toMatch(/1 of 1 service\s+at the limit/);

    expect(await figures('Containers')).toEqual({ value: 1, max: 5, text: '1 of 5 containers' });
    expect(await row('containers').innerText()).not.toMatch(/limit/);

    // Keys and push webhooks are quotas like the others: the default plan's 100 keys, hooks unlimited.
    expect(await figures('API keys')).toEqual({ value: 0, max: 100, text: '0 of 100 API keys' });
    expect(await row('webhooks').innerText()).toMatch(/Unlimited\s+0 push webhooks, unlimited/);

    // The build quotas of the default plan: 2 builds at once, 120 build minutes a day.
    expect(await figures('Builds running at once')).toEqual({
      value: 0,
      max: 2,
      text: '0 of 2 builds running at once',
    });
    expect(await figures('Build minutes in the last 24 hours')).toEqual({
      value: 0,
      max: 120,
      text: '0 of 120 build minutes in the last 24 hours',
    });

    // A limit of 0 with one deploy counted: a full bar, the text tells the real figures.
    expect(await figures('Deploys in the last hour')).toEqual({
      value: 1,
      max: 1,
      text: '1 of 0 deploys in the last hour, over the limit',
    });

    // Unlimited: no bar, the usage and the word.
    expect(await meter('Memory limits').count()).toBe(0);
    expect(await row('memory_mb').innerText()).toMatch(/Unlimited\s+[\d,]+ MiB of memory, unlimited/);
    expect(await row('memory_mb').innerText()).toContain('(set for this customer)');

    expect(await admin.locator('.quota-summary').innerText()).toMatch(
      /^2 quotas are at or over the limit: Services, Deploys in the last hour\./,
    );

    await screenshot(admin, 'quota-bars');
    expect(await axeViolations(admin)).toEqual([]);

    // acme's viewer asks for this customer's page: the API refuses, no bar is drawn.
    await viewer.goto(`${appUrl}/customers/${customer.id}/usage`);
    await viewer.getByRole('alert').first().waitFor();
    expect(await viewer.getByRole('meter').count()).toBe(0);
  });
});
