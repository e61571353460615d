import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, uniqueName } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';
import { WEB_DATABASE_URL } from './env.js';

/**
 * A customer's own backup target on its page (docs/backups.md#a-customers-own-target,
 * docs/dashboard.md): the operator, who may manage any customer, sets it from a form whose secret
 * key is a password field; the API's refusal of an internal endpoint is shown at the field and
 * nothing is stored; the saved target shows where it is and that credentials are set, never their
 * values. Changing it later sends only what changed (PATCH): the secret key and the CA, which the
 * API never gives back, stay as stored when left empty. Remove asks first. A viewer, who may not
 * manage customers, has no section at all.
 */
let browser: Browser;
let operator: Page;
let pool: pg.Pool;

const ACCESS_KEY = 'AKIADASHBOARDTEST01';
const SECRET_KEY = `dashboard-secret-${Date.now().toString(36)}`;
// The API checks the PEM's shape only; the worker is the one that would use it.
const CA = '-----BEGIN CERTIFICATE-----\nMIIBdashboard\n-----END CERTIFICATE-----';

beforeAll(async () => {
  browser = await launchChromium();
  operator = await (
    await newContext(browser, { storageState: await sessionOf(browser, 'operator') })
  ).newPage();
  pool = new pg.Pool({ connectionString: WEB_DATABASE_URL, max: 1 });
});
afterAll(async () => {
  await pool?.end();
  await browser?.close();
});

const targetOf = (customerId: string) =>
  adminCall<Record<string, unknown>>('GET', `/api/customers/${customerId}/backup-target`);
/** The sealed key pair as stored: the same bytes mean the very secret the user set, untouched. */
const sealedKeys = async (customerId: string) =>
  (
    await pool.query<{ sealed: string }>(
      'SELECT credentials::text AS sealed FROM customer_backup_targets WHERE customer_id = $1',
      [customerId],
    )
  ).rows[0]?.sealed;

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
    await form.getByLabel('CA certificate (optional)').fill(CA);
    await form.getByRole('button', { name: 'Save target' }).click();
    await section.getByText('Backup target saved').waitFor();
    expect(await form.count()).toBe(0);
    const shown = await section.innerText();
    expect(shown).toContain('https://s3.eu-central-1.example.com:443');
    expect(shown).toMatch(/Bucket\s+acme-backups/);
    expect(shown).toMatch(/Prefix\s+hostctl-test/);
    expect(shown).toMatch(/Region\s+us-east-1/);
    expect(shown).toMatch(/Credentials\s+set \(not shown\)/);
    expect(shown).toMatch(/CA certificate\s+stored/);
    const stored = await targetOf(customerId);
    expect(stored.body).toMatchObject({
      bucket: 'acme-backups',
      prefix: 'hostctl-test',
      has_credentials: true,
      has_ca_certificate: true,
    });
    const sealed = await sealedKeys(customerId);
    expect(sealed).toBeTruthy();

    // After a reload too, no credential is anywhere in the page, the form's fields included.
    await operator.reload();
    await settled(operator, `Usage of ${name}`);
    await section.getByText('set (not shown)').waitFor();
    await section.getByRole('button', { name: 'Change target' }).click();
    const change = section.getByRole('form', { name: 'Change the backup target' });
    expect(await change.getByLabel('Bucket').inputValue()).toBe('acme-backups');
    const secretField = change.getByLabel('Secret access key');
    expect(await secretField.inputValue()).toBe('');
    // Its hint says what an empty secret does, and is read with the field.
    expect(await secretField.getAttribute('aria-describedby')).toContain(
      'backup-target-secret_access_key-hint',
    );
    expect(await operator.locator('#backup-target-secret_access_key-hint').innerText()).toMatch(
      /leave empty to keep the stored one/,
    );
    expect(await operator.locator('#backup-target-ca_certificate-hint').innerText()).toMatch(
      /leave empty to keep it/,
    );
    const html = await operator.content();
    expect(html).not.toContain(SECRET_KEY);
    expect(html).not.toContain(ACCESS_KEY);
    expect(await axeViolations(operator)).toEqual([]);
    await screenshot(operator, 'backup-target-change');
    // Editing the prefix with the keys and the CA left empty changes the prefix only: the same
    // sealed key pair (not even re-sealed) and the CA are still stored.
    await change.getByLabel('Prefix').fill('hostctl-edited');
    await change.getByRole('button', { name: 'Save target' }).click();
    await section.getByText('Backup target saved').waitFor();
    expect((await targetOf(customerId)).body).toMatchObject({
      bucket: 'acme-backups',
      prefix: 'hostctl-edited',
      has_credentials: true,
      has_ca_certificate: true,
    });
    expect(await sealedKeys(customerId)).toBe(sealed);
    expect(await section.innerText()).toMatch(/Prefix\s+hostctl-edited/);

    // The CA goes only when asked; the keys stay.
    await section.getByRole('button', { name: 'Change target' }).click();
    await change.getByLabel(/Remove the stored CA certificate/).check();
    await change.getByRole('button', { name: 'Save target' }).click();
    await change.waitFor({ state: 'detached' });
    expect(await section.innerText()).toMatch(/CA certificate\s+none/);
    expect((await targetOf(customerId)).body).toMatchObject({
      prefix: 'hostctl-edited',
      has_credentials: true,
      has_ca_certificate: false,
    });
    expect(await sealedKeys(customerId)).toBe(sealed);

    // Another bucket with the keys left empty: refused at the secret's field (the stored secret
    // does not follow to another place), nothing changed.
    await section.getByRole('button', { name: 'Change target' }).click();
    await change.getByLabel('Bucket').fill('acme-elsewhere');
    await change.getByRole('button', { name: 'Save target' }).click();
    await expect.poll(() => secretField.getAttribute('aria-invalid')).toBe('true');
    expect(await operator.locator('#backup-target-secret_access_key-error').innerText()).toMatch(
      /secret_access_key|required/,
    );
    expect((await targetOf(customerId)).body).toMatchObject({
      bucket: 'acme-backups',
      prefix: 'hostctl-edited',
    });
    expect(await sealedKeys(customerId)).toBe(sealed);
    await change.getByRole('button', { name: 'Cancel' }).click();

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
