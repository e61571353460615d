import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, uniqueName } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';
import { TEST_IMAGE } from './env.js';

/**
 * A quota_exceeded refusal shows at the form that caused it (docs/quotas.md#in-the-dashboard):
 * the quota's name in words, its limit, the usage and what was asked for, announced as an alert,
 * with a link to the customer's usage page. Quotas are set through the API as an operator would;
 * the forms are used as a person does.
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

/** A fresh customer with these quota overrides. */
async function customerWith(overrides: Record<string, number | null>) {
  const name = uniqueName('refused');
  const customer = await arranged(adminCall<{ id: string }>('POST', '/api/customers', { name }), 201);
  await arranged(
    adminCall('PUT', `/api/customers/${customer.id}/quota`, { plan: 'default', overrides }),
    200,
  );
  return { id: customer.id, name };
}

/** The refusal at the form: its heading and sentence, then its link to the usage page. */
async function expectRefusalAt(page: Page, title: string, sentence: string, customerName: string | null) {
  const alert = page.getByRole('alert').filter({ hasText: title });
  await alert.waitFor();
  expect(await alert.innerText()).toContain(sentence);
  await screenshot(page, `quota-refusal-${title.replace(/\W+/g, '-').toLowerCase()}`);
  expect(await axeViolations(page)).toEqual([]);
  if (customerName === null) return;
  await alert.getByRole('link', { name: 'See usage and quotas' }).click();
  await settled(page, `Usage of ${customerName}`);
}

describe('quota refusals at their forms', () => {
  it('create service: the services quota, with the usage page one click away', async () => {
    const { appUrl } = inject('web');
    const customer = await customerWith({ services: 0 });
    await admin.goto(`${appUrl}/services/new`);
    await settled(admin, 'Create a service');
    await admin.getByRole('radio', { name: /^compose/i }).check();
    await admin.getByRole('textbox', { name: 'Name', exact: true }).fill(uniqueName('ui-quota'));
    await admin.getByRole('combobox', { name: 'Customer' }).selectOption({ label: customer.name });
    await admin
      .getByRole('textbox', { name: 'Compose file' })
      .fill(`services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n`);
    await admin.getByRole('button', { name: 'Create service' }).click();
    await expectRefusalAt(
      admin,
      'Quota exceeded: Services',
      'The customer uses 0 of 0 services and this asks for 1 more service.',
      customer.name,
    );
    expect(
      await admin.getByRole('meter', { name: 'Services', exact: true }).getAttribute('aria-valuetext'),
    ).toBe('0 of 0 services, at the limit');
  });

  it('variables that raise the memory limits: the memory quota, at the variables form', async () => {
    const { appUrl } = inject('web');
    const customer = await customerWith({});
    const service = await arranged(
      adminCall<{ id: string; name: string }>('POST', '/api/services', {
        name: uniqueName('ui-mem'),
        customer_id: customer.id,
        deploy_method: 'compose',
        compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n    deploy:\n      resources: {limits: {memory: "\${MEM:-64m}"}}\n`,
      }),
      201,
    );
    await arranged(
      adminCall('PUT', `/api/customers/${customer.id}/quota`, {
        plan: 'default',
        overrides: { memory_mb: 100 },
      }),
      200,
    );
    await admin.goto(`${appUrl}/services/${service.id}/settings`);
    await settled(admin, service.name);
    await admin.getByRole('button', { name: 'Add variable' }).click();
    await admin.getByLabel('Name', { exact: true }).last().fill('MEM');
    await admin.getByLabel('Value', { exact: true }).last().fill('200m');
    await admin.getByRole('button', { name: 'Save variables' }).click();
    await expectRefusalAt(
      admin,
      'Quota exceeded: Memory limits',
      'The customer uses 64 of 100 MiB of memory and this asks for 136 more MiB of memory.',
      customer.name,
    );
  });

  it('create webhook: the webhooks quota, at the button', async () => {
    const { appUrl, gitBase } = inject('web');
    const customer = await customerWith({ webhooks: 0 });
    const service = await arranged(
      adminCall<{ id: string; name: string }>('POST', '/api/services', {
        name: uniqueName('ui-hook'),
        customer_id: customer.id,
        deploy_method: 'git',
        git_url: `${gitBase}/static-site.git`,
        git_branch: 'main',
      }),
      201,
    );
    await admin.goto(`${appUrl}/services/${service.id}/settings`);
    await settled(admin, service.name);
    await admin.getByRole('button', { name: 'Create webhook' }).click();
    await expectRefusalAt(
      admin,
      'Quota exceeded: Push webhooks',
      'The customer uses 0 of 0 push webhooks and this asks for 1 more push webhook.',
      customer.name,
    );
    // With room, the same button creates the hook and shows its URL and secret once.
    await arranged(
      adminCall('PUT', `/api/customers/${customer.id}/quota`, {
        plan: 'default',
        overrides: { webhooks: 1 },
      }),
      200,
    );
    await admin.goto(`${appUrl}/services/${service.id}/settings`);
    await settled(admin, service.name);
    await admin.getByRole('button', { name: 'Create webhook' }).click();
    const shown = admin.getByRole('status').filter({ hasText: 'Payload URL' });
    await shown.waitFor();
    expect(await shown.innerText()).toMatch(/\/hooks\/push\/[0-9a-f-]{36}/);
    await admin.getByRole('button', { name: 'Rotate webhook' }).waitFor();
  });

  it("create key: the customer's api_keys quota, for its own viewer", async () => {
    const { appUrl, customers } = inject('web');
    const acme = customers.acme!;
    const path = `/api/customers/${acme}/quota`;
    const before = await arranged(
      adminCall<{ plan: string; overrides: Record<string, number | null>; usage: { api_keys: number } }>(
        'GET',
        path,
      ),
      200,
    );
    const used = before.usage.api_keys;
    await arranged(
      adminCall('PUT', path, { plan: before.plan, overrides: { ...before.overrides, api_keys: used } }),
      200,
    );
    try {
      await viewer.goto(`${appUrl}/api-keys`);
      await settled(viewer, 'API keys');
      await viewer.getByRole('textbox', { name: 'Key name' }).fill('one too many');
      await viewer.getByRole('button', { name: 'Create key' }).click();
      await expectRefusalAt(
        viewer,
        'Quota exceeded: API keys',
        `The customer uses ${used} of ${used} API ${used === 1 ? 'key' : 'keys'} and this asks for 1 more API key.`,
        'acme',
      );
      expect(
        await viewer.getByRole('meter', { name: 'API keys', exact: true }).getAttribute('aria-valuetext'),
      ).toMatch(/, at the limit$/);
    } finally {
      await adminCall('PUT', path, { plan: before.plan, overrides: before.overrides });
    }
  });
});
