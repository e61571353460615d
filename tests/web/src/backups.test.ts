import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, uniqueName } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';
import { TEST_IMAGE } from './env.js';

/**
 * The Backups tab against the real worker and restic (docs/backups.md, docs/dashboard.md): the
 * operator backs a service with a named volume up, verifies the backup and restores it, each
 * followed live in the list (no reload); the restore asks first, naming the volume replaced and the
 * brief stop, and is driven from the keyboard; a restore into a new service shows the API's
 * refusal of a name under the field, then creates the service and links to it.
 */
let browser: Browser;
let page: Page;
let service: { id: string; name: string; deploymentId: string };

// The volume's file is written only when absent: a restore's contents are what the service serves.
const COMPOSE = `services:
  web:
    image: ${TEST_IMAGE}
    command: ["sh", "-c", "[ -f /www/index.html ] || echo first > /www/index.html; httpd -f -p 8080 -h /www"]
    ports: ["8080"]
    volumes:
      - data:/www
volumes:
  data: {}
`;

beforeAll(async () => {
  browser = await launchChromium();
  const context = await newContext(browser, { storageState: await sessionOf(browser, 'operator') });
  page = await context.newPage();
  const name = uniqueName('ui-backup');
  const created = await adminCall<{ id: string; deploy_job_id: string }>('POST', '/api/services', {
    name,
    customer_id: inject('web').customers.acme,
    deploy_method: 'compose',
    compose: COMPOSE,
  });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
  const done = await adminCall<{ status: string }>(
    'GET',
    `/api/deployments/${created.body.deploy_job_id}?wait=90`,
  );
  if (done.body.status !== 'succeeded') throw new Error(`deploy ended ${done.body.status}`);
  service = { id: created.body.id, name, deploymentId: created.body.deploy_job_id };
});
afterAll(async () => browser?.close());

const backupsTable = () => page.getByRole('region', { name: 'Backups table' });
const firstRow = () => backupsTable().getByRole('row').nth(1);
const status = (text: string | RegExp) => page.getByRole('status').filter({ hasText: text });
/** Waits for a cell text the list's polling brings, without a reload (a ceiling, not a measurement). */
const shows = (locator: Locator, text: string | RegExp) =>
  locator.filter({ hasText: text }).waitFor({ timeout: 110_000 });

describe('backups of a service with a named volume', () => {
  it('backs up now and follows the run until it succeeded, with its size, volume and release', async () => {
    const { appUrl } = inject('web');
    await page.goto(`${appUrl}/services/${service.id}/backups`);
    await settled(page, service.name);
    expect(await page.getByRole('link', { name: 'Backups' }).getAttribute('aria-current')).toBe('page');
    await page.getByText('No backups yet. Back up now takes the first one.').waitFor();
    await page.getByText('No schedule: backups are taken on demand only.').waitFor();

    await page.getByRole('button', { name: 'Back up now' }).click();
    await status(/Backup [0-9a-f]{8} queued/).waitFor();
    await shows(firstRow(), 'Succeeded');
    const row = firstRow();
    expect(await row.innerText()).toMatch(/on demand/);
    expect(await row.innerText()).toMatch(/taken live, local target/);
    expect(await row.getByRole('cell').nth(1).innerText()).toMatch(/\d+(\.\d)? (bytes|KiB)/);
    expect(await row.getByRole('cell').nth(3).innerText()).toMatch(/^data .*1 files?$/);
    expect(await row.getByRole('link', { name: `Release ${service.deploymentId.slice(0, 8)}` }).count()).toBe(
      1,
    );
    expect(await row.innerText()).toMatch(/Not verified/);
    expect(await row.innerText()).toMatch(/Never restored/);
    expect(await page.getByText('No backup of this service has passed a check yet.').count()).toBe(1);
    await screenshot(page, 'backups-succeeded');
  });

  it('verifies the backup and shows the check passed and the age of the last verified backup', async () => {
    await firstRow()
      .getByRole('button', { name: /^Verify the backup of / })
      .click();
    await status(/Check of backup [0-9a-f]{8} queued/).waitFor();
    await shows(firstRow(), /Passed (now|\d+ seconds? ago)/);
    await page.getByText(/^Last verified backup: taken .* checked /).waitFor();
  });

  it('restores from the keyboard after a question naming the volume and the brief stop', async () => {
    const restore = firstRow().getByRole('button', { name: /^Restore the backup of / });
    await restore.focus();
    await page.keyboard.press('Enter');
    const question = page.getByRole('group', { name: 'Confirm restore' });
    const asked = await question.innerText();
    expect(asked).toContain(`Restore ${service.name} from the backup of`);
    expect(asked).toContain("The current contents of its volume data are replaced by the backup's.");
    expect(asked).toContain(
      `${service.name} stops while the volumes are swapped and starts again afterwards.`,
    );
    // Cancelled once: nothing is restored.
    await question.getByRole('button', { name: 'Cancel' }).click();
    expect(await question.count()).toBe(0);
    expect(await firstRow().innerText()).toMatch(/Never restored/);

    await restore.focus();
    await page.keyboard.press('Enter');
    // The confirm button has the focus: Enter confirms.
    await expect
      .poll(() => page.locator(':focus').innerText(), { timeout: 15_000 })
      .toBe('Restore and replace the data');
    await page.keyboard.press('Enter');
    await status(/Restore [0-9a-f]{8} queued/).waitFor();
    await shows(firstRow(), /Restored (now|\d+ seconds? ago)/);
    const after = await adminCall<{ status: string }>('GET', `/api/services/${service.id}`);
    expect(after.body.status).toBe('running');
    await screenshot(page, 'backups-restored');
    expect(await axeViolations(page)).toEqual([]);
  });

  it('restores into a new service: a refused name under the field, then the new service linked', async () => {
    await firstRow()
      .getByRole('button', { name: /^Restore into a new service from the backup of / })
      .click();
    const form = page.getByRole('region', { name: 'Restore into a new service' });
    const name = form.getByLabel('Name of the new service');
    await expect
      .poll(() => page.locator(':focus').getAttribute('id'), { timeout: 15_000 })
      .toBe(await name.getAttribute('id'));
    await name.fill('Not A Name!');
    await form.getByRole('button', { name: 'Create and restore' }).click();
    await form.locator('input[aria-invalid="true"]').waitFor();
    const refused = await adminCall<{ errors: { path: string; message: string }[] }>(
      'POST',
      `/api/backups/${await firstBackupId()}/clone`,
      { name: 'Not A Name!' },
    );
    const message = refused.body.errors.find((error) => error.path === '/body/name')?.message ?? '';
    expect(message).not.toBe('');
    const describedBy = (await name.getAttribute('aria-describedby'))?.split(' ') ?? [];
    const described = await Promise.all(describedBy.map((id) => page.locator(`[id="${id}"]`).innerText()));
    expect(described.join(' ')).toContain(message);

    // A name already taken: the API's 409 detail, shown in the form.
    await name.fill(service.name);
    await form.getByRole('button', { name: 'Create and restore' }).click();
    await form.getByRole('alert').filter({ hasText: service.name }).waitFor();

    const newName = uniqueName('ui-clone');
    await name.fill(newName);
    await form.getByRole('button', { name: 'Create and restore' }).click();
    await status(`Restoring into the new service ${newName}`).waitFor();
    expect(await form.count()).toBe(0);
    await shows(
      firstRow(),
      /Restored into a new service|Restoring into a new service|Restore into a new service queued/,
    );
    const link = firstRow().getByRole('link', { name: 'open the new service' });
    await link.click();
    await settled(page, newName);
  });
});

async function firstBackupId(): Promise<string> {
  const list = await adminCall<{ data: { id: string }[] }>('GET', `/api/services/${service.id}/backups`);
  const id = list.body.data[0]?.id;
  if (!id) throw new Error('no backup listed');
  return id;
}
