import pg from 'pg';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, deployedService, uniqueName } from './api.js';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';
import { WEB_DATABASE_URL } from './env.js';

/**
 * The Jobs tab (docs/jobs.md, docs/dashboard.md): an operator creates a schedule (the API's field
 * errors shown under the field they name), runs it now and reads the run's outcome and log in the
 * real worker's container, edits, disables and deletes it (asked first); one-off and missed runs
 * show in the history. A viewer gets the reason and no schedule, command or control.
 */
let browser: Browser;
let page: Page;
let pool: pg.Pool;

beforeAll(async () => {
  browser = await launchChromium();
  const context = await newContext(browser, { storageState: await sessionOf(browser, 'operator') });
  page = await context.newPage();
  pool = new pg.Pool({ connectionString: WEB_DATABASE_URL, max: 1 });
});
afterAll(async () => {
  await pool?.end();
  await browser?.close();
});

interface Schedule {
  id: string;
  name: string;
  cron: string;
  time_zone: string;
  command: string[];
  enabled: boolean;
}

const schedulesOf = async (serviceId: string) =>
  (await adminCall<{ data: Schedule[] }>('GET', `/api/services/${serviceId}/schedules`)).body.data;

/** The text of what a control is described by (its hint and the API's error): what a screen reader reads. */
async function descriptionOf(control: Locator): Promise<string> {
  const ids = (await control.getAttribute('aria-describedby'))?.split(' ') ?? [];
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).innerText()));
  return texts.join(' ');
}

/** The message the API gives for a field of a schedule, to find it where the form shows it. */
async function apiMessage(serviceId: string, path: string, change: object): Promise<string> {
  const refused = await adminCall<{ errors?: { path: string; message: string }[] }>(
    'POST',
    `/api/services/${serviceId}/schedules`,
    { name: 'probe', cron: '0 3 * * *', command: ['true'], ...change },
  );
  const message = refused.body.errors?.find((error) => error.path === path)?.message;
  if (refused.status !== 400 || !message)
    throw new Error(`expected a 400 naming ${path}: ${JSON.stringify(refused)}`);
  return message;
}

const scheduleRow = (name: string) =>
  page.getByRole('region', { name: 'Schedules' }).getByRole('row', { name: new RegExp(name) });

const status = (text: string | RegExp) => page.getByRole('status').filter({ hasText: text });

describe('jobs', () => {
  it('creates a schedule, shows refused fields where they are, runs it now and shows its log', async () => {
    const { appUrl } = inject('web');
    const service = await deployedService('acme', 'ui-jobs');
    const name = uniqueName('nightly');
    const marker = `job-output-${Date.now().toString(36)}`;

    await page.goto(`${appUrl}/services/${service.id}/jobs`);
    await settled(page, service.name);
    expect(await page.getByRole('link', { name: 'Jobs' }).getAttribute('aria-current')).toBe('page');
    await page.getByText('No schedules yet.').waitFor();
    await page.getByText('No runs yet.').waitFor();

    await page.getByRole('button', { name: 'New schedule' }).click();
    const form = page.getByRole('region', { name: 'New schedule' });
    await form.getByLabel('Name').fill(name);
    const cron = form.getByLabel('Cron expression');
    await cron.fill('every night');
    await form.getByLabel('Command').fill(`sh\n-c\necho ${marker}; echo "to stderr" >&2; exit 3`);
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await expect.poll(() => cron.getAttribute('aria-invalid')).toBe('true');
    expect(await descriptionOf(cron)).toContain(
      await apiMessage(service.id, '/body/cron', { cron: 'every night' }),
    );
    expect(await page.getByRole('alert').innerText()).toContain('/body/cron');
    expect(await schedulesOf(service.id)).toEqual([]);
    expect(await axeViolations(page)).toEqual([]);

    await cron.fill('30 2 * * *');
    const zone = form.getByLabel('Time zone');
    await zone.fill('Mars/Olympus_Mons');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await expect.poll(() => zone.getAttribute('aria-invalid')).toBe('true');
    expect(await cron.getAttribute('aria-invalid')).toBe('false');
    expect(await descriptionOf(zone)).toContain(
      await apiMessage(service.id, '/body/time_zone', { time_zone: 'Mars/Olympus_Mons' }),
    );
    await screenshot(page, 'jobs-field-error');

    await zone.fill('Europe/Berlin');
    await form.getByRole('button', { name: 'Create schedule' }).click();
    await status(`Schedule ${name} created.`).waitFor();
    const [created] = await schedulesOf(service.id);
    expect(created).toMatchObject({
      name,
      cron: '30 2 * * *',
      time_zone: 'Europe/Berlin',
      command: ['sh', '-c', `echo ${marker}; echo "to stderr" >&2; exit 3`],
      enabled: true,
    });
    const row = scheduleRow(name);
    await expect.poll(() => row.innerText()).toContain('never');
    expect(await row.innerText()).toMatch(/30 2 \* \* \*\s+Europe\/Berlin/);
    expect(await row.innerText()).toMatch(/in \d+ (hours?|minutes?)/);

    await page.getByRole('button', { name: `Run now ${name}` }).click();
    await status(new RegExp(`Run [0-9a-f]{8} of ${name} queued`)).waitFor();
    // Followed live (a region) while it runs; a finished run's stored output is a log.
    const output = page.getByLabel(/^Output of run/);
    await expect.poll(() => output.innerText(), { timeout: 90_000 }).toContain(marker);
    await expect.poll(() => output.innerText(), { timeout: 15_000 }).toContain('to stderr');
    const panel = page.getByRole('region', { name: /^Run [0-9a-f]{8}$/ });
    await expect
      .poll(() => panel.getByRole('status').innerText(), { timeout: 15_000 })
      .toMatch(/failed\s+exit code 3/);
    await page.getByRole('heading', { name: `Runs of ${name}` }).waitFor();
    const runRow = page.getByRole('row', { name: /run now/ });
    await expect.poll(() => runRow.innerText(), { timeout: 15_000 }).toMatch(/failed\s+3/);
    await expect.poll(() => row.innerText(), { timeout: 20_000 }).toMatch(/failed\s+exit 3/);
    await screenshot(page, 'jobs-run-now');
    expect(await axeViolations(page)).toEqual([]);
  });

  it('edits, disables and deletes a schedule (asking first), and lists one-off and missed runs', async () => {
    const { appUrl } = inject('web');
    const service = await deployedService('acme', 'ui-jobs-edit');
    const name = uniqueName('cleanup');
    const made = await adminCall<Schedule>('POST', `/api/services/${service.id}/schedules`, {
      name,
      cron: '0 4 * * *',
      command: ['sh', '-c', 'echo cleaning'],
    });
    expect(made.status).toBe(201);
    // A time no worker reached, as the scheduler records it after an outage (docs/jobs.md).
    await pool.query(
      `INSERT INTO service_runs (id, service_id, command, timeout_seconds, status, error, schedule_id, scheduled_for)
       VALUES (gen_random_uuid(), $1, $2, 600, 'missed', 'no worker reached this time within 5 minutes', $3, now() - interval '1 day')`,
      [service.id, ['sh', '-c', 'echo cleaning'], made.body.id],
    );
    const oneOff = await adminCall<{ id: string }>('POST', `/api/services/${service.id}/runs`, {
      command: ['sh', '-c', 'echo one-off'],
    });
    expect(oneOff.status).toBe(202);
    const done = await adminCall<{ status: string }>('GET', `/api/runs/${oneOff.body.id}?wait=60`);
    expect(done.body.status).toBe('succeeded');

    await page.goto(`${appUrl}/services/${service.id}/jobs`);
    await settled(page, service.name);
    const all = page.getByRole('region', { name: 'Runs of the service' });
    await expect
      .poll(() => all.getByRole('row', { name: /one-off run/ }).innerText())
      .toMatch(/succeeded\s+0/);
    expect(await all.getByRole('row', { name: /missed/ }).innerText()).toContain(`schedule ${name}`);
    const row = scheduleRow(name);
    await expect.poll(() => row.innerText()).toContain('missed');
    await all.getByRole('button', { name: `Show log of run ${oneOff.body.id.slice(0, 8)}` }).click();
    expect(await page.getByRole('log', { name: /Output of run/ }).innerText()).toContain('one-off');

    await page.getByRole('button', { name: `Edit ${name}` }).click();
    const form = page.getByRole('region', { name: `Edit ${name}` });
    expect(await form.getByLabel('Command').inputValue()).toBe('sh\n-c\necho cleaning');
    await form.getByLabel('Cron expression').fill('*/30 * * * *');
    await form.getByRole('button', { name: 'Save schedule' }).click();
    await status(`Schedule ${name} saved.`).waitFor();
    expect((await schedulesOf(service.id))[0]).toMatchObject({ cron: '*/30 * * * *', time_zone: 'UTC' });

    await page.getByRole('button', { name: `Disable ${name}` }).click();
    await status(`${name} disabled.`).waitFor();
    await expect.poll(() => row.innerText()).toContain('no (disabled)');
    expect((await schedulesOf(service.id))[0]?.enabled).toBe(false);

    await page.getByRole('button', { name: `Delete ${name}` }).click();
    const question = page.getByRole('group', { name: `Confirm delete ${name}` });
    expect(await question.innerText()).toContain('Its run history goes with it');
    expect(await axeViolations(page)).toEqual([]);
    await question.getByRole('button', { name: 'Cancel' }).click();
    expect(await schedulesOf(service.id)).toHaveLength(1);
    await page.getByRole('button', { name: `Delete ${name}` }).click();
    await page.getByRole('button', { name: 'Delete schedule' }).click();
    await status(`${name} deleted, with its run history.`).waitFor();
    expect(await schedulesOf(service.id)).toEqual([]);
    await page.getByText('No schedules yet.').waitFor();
  });

  it('tells a viewer why jobs are not shown, with no schedule, command or control', async () => {
    const { appUrl } = inject('web');
    const service = await deployedService('acme', 'ui-jobs-viewer');
    const secretish = `viewer-never-sees-${Date.now().toString(36)}`;
    const made = await adminCall('POST', `/api/services/${service.id}/schedules`, {
      name: uniqueName('hidden'),
      cron: '0 5 * * *',
      command: ['sh', '-c', `echo ${secretish}`],
    });
    expect(made.status).toBe(201);
    const viewer = await (
      await newContext(browser, { storageState: await sessionOf(browser, 'viewer') })
    ).newPage();
    await viewer.goto(`${appUrl}/services/${service.id}/jobs`);
    await settled(viewer, service.name);
    await viewer.getByText(/shown to operators and admins only/).waitFor();
    expect(
      await viewer
        .getByRole('button')
        .filter({ hasText: /schedule|run|edit|delete/i })
        .count(),
    ).toBe(0);
    expect(await viewer.content()).not.toContain(secretish);
    expect(await axeViolations(viewer)).toEqual([]);
    await viewer.context().close();
  });
});
