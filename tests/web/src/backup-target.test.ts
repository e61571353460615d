import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, uniqueName } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';

/**
 * A customer's own backup target on its page (docs/backups.md#a-customers-own-target,
 * docs/dashboard.md): the operator, who may manage any customer, sets it from a form whose secret
 * key is a password field; the API's refusal of an internal endpoint is shown at the field and
 * nothing is stored; the saved target shows where it is and that credentials are set, never their
 * values; Remove asks first. A viewer, who may not manage customers, has no section at all.
 */
let browser: Browser;
let operator: Page;

const ACCESS_KEY = 'AKIADASHBOARDTEST01';
const SECRET_KEY = `dashboard-secret-${Date.now().toString(36)}`;

beforeAll(async () => {
  browser = await launchChromium();
  operator = await (
    await newContext(browser, { storageState: await sessionOf(browser, 'operator') })
  ).newPage();
});
afterAll(async () => browser?.close());

const targetOf = (customerId: string) =>
  adminCall<Record<string, unknown>>('GET', `/api/customers/${customerId}/backup-target`);

describe('a customer’s backup target', () => {
  it('is set from a form, refused at the field, shown without credentials, and removed', async () => {
    const { appUrl } = inject('web');
    const name = uniqueName('target');
    const created = await adminCall<{ id: string }>('POST', '/api/customers', { name });
    expect(created.status).toBe(201);
    const customerId = created.body.id;

    await operator.goto(`${appUrl}/customers/${customerId}/usage`);
    await settled(operator, `Usage of ${name}`);
    const section = operator.getByRole('region', { name: 'Backup target' });
    await section.getByText('No target of its own').waitFor();
    await section.getByRole('button', { name: 'Set a target' }).click();
    const form = section.getByRole('form', { name: 'Set the backup target' });
    expect(await form.getByLabel('Secret access key').getAttribute('type')).toBe('password');

    // A private address: the API's SSRF guard refuses it, named at Endpoint; nothing is stored.
    const endpoint = form.getByLabel('Endpoint');
    await endpoint.fill('https://10.0.0.5');
    await form.getByLabel('Bucket').fill('acme-backups');
    await form.getByLabel('Access key ID').fill(ACCESS_KEY);
    await form.getByLabel('Secret access key').fill(SECRET_KEY);
    await form.getByRole('button', { name: 'Save target' }).click();
    await expect.poll(() => endpoint.getAttribute('aria-invalid')).toBe('true');
    const describedBy = (await endpoint.getAttribute('aria-describedby')) ?? '';
    expect(describedBy).toContain('backup-target-endpoint-error');
    expect(await operator.locator('#backup-target-endpoint-error').innerText()).toMatch(/private address/);
    expect(await form.getByLabel('Bucket').getAttribute('aria-invalid')).toBe('false');
    expect((await targetOf(customerId)).status).toBe(404);
    expect(await axeViolations(operator)).toEqual([]);
    await screenshot(operator, 'backup-target-refused');

    await endpoint.fill('https://s3.eu-central-1.example.com');
    await form.getByLabel('Prefix').fill('hostctl-test');
    await form.getByRole('button', { name: 'Save target' }).click();
    await section.getByText('Backup target saved').waitFor();
    expect(await form.count()).toBe(0);
    const shown = await section.innerText();
    expect(shown).toContain('https://s3.eu-central-1.example.com:443');
    expect(shown).toMatch(/Bucket\s+acme-backups/);
    expect(shown).toMatch(/Prefix\s+hostctl-test/);
    expect(shown).toMatch(/Region\s+us-east-1/);
    expect(shown).toMatch(/Credentials\s+set \(not shown\)/);
    expect(shown).toMatch(/CA certificate\s+none/);
    const stored = await targetOf(customerId);
    expect(stored.body).toMatchObject({
      bucket: 'acme-backups',
      prefix: 'hostctl-test',
      has_credentials: true,
    });

    // After a reload too, no credential is anywhere in the page, the form's fields included.
    await operator.reload();
    await settled(operator, `Usage of ${name}`);
    await section.getByText('set (not shown)').waitFor();
    await section.getByRole('button', { name: 'Replace target' }).click();
    expect(await form.getByLabel('Bucket').inputValue()).toBe('acme-backups');
    expect(await form.getByLabel('Secret access key').inputValue()).toBe('');
    const html = await operator.content();
    expect(html).not.toContain(SECRET_KEY);
    expect(html).not.toContain(ACCESS_KEY);
    await screenshot(operator, 'backup-target-replace');
    // Editing the prefix with the keys left empty keeps the stored keys.
    await form.getByLabel('Prefix').fill('hostctl-edited');
    await form.getByRole('button', { name: 'Save target' }).click();
    await section.getByText('Backup target saved').waitFor();
    expect((await targetOf(customerId)).body).toMatchObject({
      prefix: 'hostctl-edited',
      has_credentials: true,
    });
    // Another bucket with the keys left empty: refused at the secret's field (the stored secret
    // does not follow to another place), nothing changed.
    await section.getByRole('button', { name: 'Replace target' }).click();
    await form.getByLabel('Bucket').fill('acme-elsewhere');
    await form.getByRole('button', { name: 'Save target' }).click();
    const secretField = form.getByLabel('Secret access key');
    await expect.poll(() => secretField.getAttribute('aria-invalid')).toBe('true');
    expect((await targetOf(customerId)).body).toMatchObject({
      bucket: 'acme-backups',
      prefix: 'hostctl-edited',
    });
    await form.getByRole('button', { name: 'Cancel' }).click();

    // Remove asks first; Cancel keeps it.
    await section.getByRole('button', { name: 'Remove target' }).click();
    const question = section.getByRole('group', { name: 'Confirm removing the backup target' });
    await question.getByRole('button', { name: 'Cancel' }).click();
    expect((await targetOf(customerId)).status).toBe(200);
    await section.getByRole('button', { name: 'Remove target' }).click();
    await question.getByRole('button', { name: 'Remove target' }).click();
    await section.getByText('No target of its own').waitFor();
    expect((await targetOf(customerId)).status).toBe(404);
    expect(await axeViolations(operator)).toEqual([]);
  });

  it('is not shown to a viewer, who may not manage the customer', async () => {
    const { appUrl, customers } = inject('web');
    const viewer = await (
      await newContext(browser, { storageState: await sessionOf(browser, 'viewer') })
    ).newPage();
    await viewer.goto(`${appUrl}/customers/${customers.acme}/usage`);
    await viewer.getByRole('heading', { name: /^Usage of / }).waitFor();
    await viewer.getByRole('heading', { name: /^Quotas/ }).waitFor();
    expect(await viewer.getByRole('region', { name: 'Backup target' }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: /target/ }).count()).toBe(0);
    await viewer.context().close();
  });
});
