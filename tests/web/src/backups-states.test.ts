import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, CHATTY_COMPOSE, uniqueName } from './api.js';
import { newContext, screenshot, sessionOf, settled } from './browser.js';
import { WEB_DATABASE_URL } from './env.js';

/**
 * What the Backups tab says of runs that did not succeed, and the backup schedule
 * (docs/backups.md, docs/dashboard.md). Failed, expired and missed runs take long to happen for
 * real (a target down, a retention prune, a worker down past a schedule's grace), so they are
 * written as the worker and the scheduler write them, the way the certificate and job tests seed
 * theirs; backups.test.ts takes a real one. The schedule is set through the form (the API's
 * refusals under the field they name), shown, switched off and removed; a viewer reads it all and
 * gets no control.
 */
let browser: Browser;
let operator: Page;
let viewer: Page;
let pool: pg.Pool;
let service: { id: string; name: string };

beforeAll(async () => {
  browser = await launchChromium();
  const [operatorSession, viewerSession] = await Promise.all([
    sessionOf(browser, 'operator'),
    sessionOf(browser, 'viewer'),
  ]);
  operator = await (await newContext(browser, { storageState: operatorSession })).newPage();
  viewer = await (await newContext(browser, { storageState: viewerSession })).newPage();
  pool = new pg.Pool({ connectionString: WEB_DATABASE_URL, max: 1 });
  const name = uniqueName('ui-backup-states');
  const created = await adminCall<{ id: string }>('POST', '/api/services', {
    name,
    customer_id: inject('web').customers.acme,
    deploy_method: 'compose',
    compose: CHATTY_COMPOSE,
  });
  if (created.status !== 201) throw new Error(`create: ${created.status}`);
  service = { id: created.body.id, name };
  const seed = (minutesAgo: number, columns: Record<string, unknown>) => {
    const row = {
      id: randomUUID(),
      service_id: service.id,
      customer_id: inject('web').customers.acme,
      method: 'live',
      ...columns,
    };
    const names = Object.keys(row);
    return pool.query(
      `INSERT INTO backups (${names.join(', ')}, created_at)
       VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')}, now() - make_interval(mins => ${minutesAgo}))`,
      Object.values(row),
    );
  };
  const volumes = JSON.stringify([{ name: 'data', snapshot_id: 'abcdef12', bytes: 2048, files: 2 }]);
  await seed(40, {
    status: 'expired',
    volumes,
    size_bytes: 2048,
    duration_ms: 3000,
    error: 'its snapshots were removed by the retention policy (keep last 1)',
  });
  await seed(30, {
    status: 'failed',
    error: 'restic backup of volume data failed: the target is unreachable',
    duration_ms: 1500,
  });
  await seed(20, {
    status: 'missed',
    error: 'no worker reached this time within 5 minutes (7 minutes late)',
    scheduled_for: new Date(Date.now() - 20 * 60_000),
  });
  await seed(10, {
    status: 'succeeded',
    volumes,
    size_bytes: 2048,
    duration_ms: 83_400,
    verify_status: 'failed',
    verify_error: 'restic check failed: pack 1a2b missing',
  });
});
afterAll(async () => {
  await pool?.end();
  await browser?.close();
});

const rowOf = (page: Page, text: string | RegExp) =>
  page.getByRole('region', { name: 'Backups table' }).getByRole('row').filter({ hasText: text });
const schedule = (page: Page) => page.getByRole('region', { name: 'Backup schedule' });

async function described(page: Page, control: Locator): Promise<string> {
  const ids = (await control.getAttribute('aria-describedby'))?.split(' ') ?? [];
  return (await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).innerText()))).join(' ');
}

describe('backup states', () => {
  it('says why each run did not succeed, and offers no restore of those', async () => {
    await operator.goto(`${inject('web').appUrl}/services/${service.id}/backups`);
    await settled(operator, service.name);
    const failed = rowOf(operator, 'Failed: restic backup of volume data failed: the target is unreachable');
    const expired = rowOf(
      operator,
      'Expired: the retention policy removed its snapshots; it cannot be restored',
    );
    const missed = rowOf(operator, 'Missed: no worker reached this time within 5 minutes (7 minutes late)');
    for (const row of [failed, expired, missed]) {
      expect(await row.count()).toBe(1);
      expect(await row.getByRole('button').count()).toBe(0);
    }
    expect(await missed.innerText()).toMatch(/scheduled for /);
    const checkFailed = rowOf(operator, 'Failed: restic check failed: pack 1a2b missing');
    expect(await checkFailed.innerText()).toMatch(/2\.0 KiB/);
    expect(await checkFailed.innerText()).toMatch(/1 min 23 s/);
    expect(await checkFailed.getByRole('button', { name: /^Restore the backup of / }).count()).toBe(1);
    expect(await operator.getByText('No backup of this service has passed a check yet.').count()).toBe(1);
    await screenshot(operator, 'backups-states');
  });
});

describe('backup schedule', () => {
  it('is set through the form, with the API refusals under the fields, then shown', async () => {
    await schedule(operator).getByText('No schedule: backups are taken on demand only.').waitFor();
    await schedule(operator).getByRole('button', { name: 'Set a schedule' }).click();
    const form = operator.getByRole('region', { name: 'New backup schedule' });
    const cron = form.getByLabel('Cron expression');
    await cron.fill('*/5 * * * *');
    await form.getByLabel('Time zone').fill('Europe/Berlin');
    await form.getByRole('button', { name: 'Save schedule' }).click();
    await form.locator('#backup-schedule-cron[aria-invalid="true"]').waitFor();
    expect(await described(operator, cron)).toMatch(/apart|interval|minimum|at least/i);

    await cron.fill('30 2 * * *');
    const keepLast = form.getByLabel('Keep the last');
    await keepLast.fill('0');
    await form.getByRole('button', { name: 'Save schedule' }).click();
    await form.locator('#backup-schedule-keep_last[aria-invalid="true"]').waitFor();
    expect(await cron.getAttribute('aria-invalid')).toBe('false');
    expect(await described(operator, keepLast)).toMatch(/>= 1|at least 1|minimum/i);

    await keepLast.fill('3');
    await form.getByLabel('Daily').fill('14');
    await form.getByLabel('Restore test').fill('0 5 * * 0');
    await form.getByRole('button', { name: 'Save schedule' }).click();
    await operator.getByRole('status').filter({ hasText: 'Backup schedule saved.' }).waitFor();
    const facts = await schedule(operator).innerText();
    expect(facts).toContain('30 2 * * * in Europe/Berlin');
    expect(facts).toContain('On');
    expect(facts).toContain(
      "Keeps the last 3, 14 daily; weekly, monthly from the compose labels or the operator's defaults.",
    );
    expect(facts).toMatch(/Restore test\s+0 5 \* \* 0, next /);
    const stored = await adminCall<{ next_run_at: string; verify_cron: string | null }>(
      'GET',
      `/api/services/${service.id}/backup-schedule`,
    );
    expect(stored.body.next_run_at).not.toBeNull();
    expect(stored.body.verify_cron).toBe('0 5 * * 0');
  });

  it('is switched off, then removed after the question; the backups stay', async () => {
    await schedule(operator).getByRole('button', { name: 'Edit schedule' }).click();
    const form = operator.getByRole('region', { name: 'Edit the backup schedule' });
    expect(await form.getByLabel('Cron expression').inputValue()).toBe('30 2 * * *');
    await form.getByLabel(/^On/).uncheck();
    await form.getByRole('button', { name: 'Save schedule' }).click();
    await schedule(operator).getByText('Off: no scheduled backup is taken').waitFor();
    expect(await schedule(operator).innerText()).toContain('none while it is off');
    // The edit sent the restore test again (a PUT replaces the whole schedule).
    const edited = await adminCall<{ verify_cron: string | null }>(
      'GET',
      `/api/services/${service.id}/backup-schedule`,
    );
    expect(edited.body.verify_cron).toBe('0 5 * * 0');

    await schedule(operator).getByRole('button', { name: 'Remove schedule' }).click();
    const question = operator.getByRole('group', { name: 'Confirm remove schedule' });
    await question.getByRole('button', { name: 'Cancel' }).click();
    expect(await question.count()).toBe(0);
    await schedule(operator).getByRole('button', { name: 'Remove schedule' }).click();
    await question.getByRole('button', { name: 'Remove schedule' }).click();
    await schedule(operator).getByText('No schedule: backups are taken on demand only.').waitFor();
    expect(await operator.getByRole('region', { name: 'Backups table' }).getByRole('row').count()).toBe(5);
  });
});

describe('a viewer of acme', () => {
  it('reads the backups and the schedule and gets no control', async () => {
    const set = await adminCall('PUT', `/api/services/${service.id}/backup-schedule`, {
      cron: '0 4 * * *',
      retention: { keep_last: 2 },
    });
    expect(set.status).toBe(200);
    await viewer.goto(`${inject('web').appUrl}/services/${service.id}/backups`);
    await settled(viewer, service.name);
    await rowOf(viewer, 'Failed: restic check failed: pack 1a2b missing').waitFor();
    await schedule(viewer).getByText('0 4 * * * in UTC').waitFor();
    expect(await viewer.getByRole('main').getByRole('button').allInnerTexts()).toEqual([]);
    expect(await viewer.getByText('No backups yet. Back up now takes the first one.').count()).toBe(0);
    await screenshot(viewer, 'backups-viewer');
  });
});
