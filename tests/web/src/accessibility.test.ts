import pg from 'pg';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { adminCall, deployedService, uniqueName } from './api.js';
import { WEB_DATABASE_URL } from './env.js';
import { axeViolations, newContext, screenshot, sessionOf, settled, type ViewportName } from './browser.js';

/**
 * axe-core on every screen, at 1280 and 390 px, light and dark: no WCAG 2.1 A/AA violation. Each
 * screen is also kept as a screenshot (the artifacts folder the global setup prints).
 */
let browser: Browser;
let adminSession: string;
let service: { id: string; name: string };
let group: { id: string; name: string };
/** A certificate whose renewal failed, so the certificates screen is checked with its table and reason. */
const certificateName = uniqueName('a11y-cert') + '.test';

beforeAll(async () => {
  browser = await launchChromium();
  [adminSession, service, group] = await Promise.all([
    sessionOf(browser, 'admin'),
    deployedService('acme', 'a11y'),
    variableGroup(),
  ]);
  // A schedule, so the Jobs tab is checked with its table and controls rather than its empty state.
  const schedule = await adminCall('POST', `/api/services/${service.id}/schedules`, {
    name: 'a11y-nightly',
    cron: '30 2 * * *',
    time_zone: 'Europe/Berlin',
    command: ['sh', '-c', 'echo report'],
  });
  if (schedule.status !== 201) throw new Error(`schedule: ${schedule.status}`);
  // A backup schedule and two backups (one verified, one failed), so the Backups tab is checked
  // with its table, its controls and the schedule's facts.
  const backupSchedule = await adminCall('PUT', `/api/services/${service.id}/backup-schedule`, {
    cron: '0 3 * * *',
    time_zone: 'Europe/Berlin',
    retention: { keep_last: 3 },
  });
  if (backupSchedule.status !== 200) throw new Error(`backup schedule: ${backupSchedule.status}`);
  await withPool((pool) =>
    pool.query(
      `INSERT INTO tls_certificates (name, issuer, not_before, not_after, renew_after, last_error, last_attempt_at)
       VALUES ($1, 'CN=Pebble Intermediate CA', now() - interval '80 days', now() + interval '10 days',
               now() - interval '20 days', 'urn:ietf:params:acme:error:connection: refused', now())`,
      [certificateName],
    ),
  );
  await withPool(async (pool) => {
    const customer = inject('web').customers.acme;
    await pool.query(
      `INSERT INTO backups (id, service_id, customer_id, status, method, volumes, size_bytes, duration_ms,
                            verify_status, verified_at, finished_at)
       VALUES (gen_random_uuid(), $1, $2, 'succeeded', 'stop', $3, 4096, 2500, 'passed', now(), now())`,
      [
        service.id,
        customer,
        JSON.stringify([{ name: 'data', snapshot_id: 'abcdef12', bytes: 4096, files: 3 }]),
      ],
    );
    await pool.query(
      `INSERT INTO backups (id, service_id, customer_id, status, method, error, created_at)
       VALUES (gen_random_uuid(), $1, $2, 'failed', 'live', 'restic backup failed: the target is unreachable',
               now() - interval '1 day')`,
      [service.id, customer],
    );
  });
});

async function withPool(use: (pool: pg.Pool) => Promise<unknown>): Promise<void> {
  const pool = new pg.Pool({ connectionString: WEB_DATABASE_URL, max: 1 });
  try {
    await use(pool);
  } finally {
    await pool.end();
  }
}

/** A group with a plain and a secret variable, so its page shows both editors filled. */
async function variableGroup(): Promise<{ id: string; name: string }> {
  const created = await adminCall<{ id: string; name: string }>('POST', '/api/variable-groups', {
    name: uniqueName('a11y-group'),
    customer_id: inject('web').customers.acme,
    variables: { LOG_LEVEL: 'info' },
    secret_variables: { SMTP_PASSWORD: 'a11y-secret' },
  });
  if (created.status !== 201) throw new Error(`variable group: ${created.status}`);
  return created.body;
}
afterAll(async () => {
  await withPool((pool) => pool.query('DELETE FROM tls_certificates WHERE name = $1', [certificateName]));
  await browser?.close();
});

/** Path and the h1 that names the screen (the accessibility contract). */
function screens(): [string, string, string | RegExp][] {
  const base = `/services/${service.id}`;
  return [
    ['overview', '/', 'Overview'],
    ['services', '/services', 'Services'],
    ['create', '/services/new', 'Create a service'],
    ['service-overview', base, service.name],
    ['service-deployments', `${base}/deployments`, service.name],
    ['service-logs', `${base}/logs`, service.name],
    ['service-jobs', `${base}/jobs`, service.name],
    ['service-terminal', `${base}/terminal`, service.name],
    ['service-backups', `${base}/backups`, service.name],
    ['service-events', `${base}/events`, service.name],
    ['service-settings', `${base}/settings`, service.name],
    ['api-keys', '/api-keys', 'API keys'],
    ['customers', '/customers', 'Customers'],
    ['usage', `/customers/${inject('web').customers.acme}/usage`, 'Usage of acme'],
    ['users', '/users', 'Users'],
    ['certificates', '/certificates', 'Certificates'],
    ['variable-groups', '/variable-groups', 'Variable groups'],
    ['variable-group', `/variable-groups/${group.id}`, group.name],
  ];
}

const LAYOUTS: [ViewportName, 'light' | 'dark'][] = [
  ['desktop', 'light'],
  ['desktop', 'dark'],
  ['phone', 'light'],
  ['phone', 'dark'],
];

describe.each(LAYOUTS)('at %s width, %s scheme', (viewport, scheme) => {
  let context: BrowserContext;
  beforeAll(async () => {
    context = await newContext(browser, { viewport, scheme, storageState: adminSession });
  });
  afterAll(async () => context?.close());

  it('every signed-in screen has its h1, landmarks and no WCAG 2.1 A/AA violation', async () => {
    const { appUrl } = inject('web');
    const page = await context.newPage();
    const found: Record<string, string[]> = {};
    for (const [name, path, heading] of screens()) {
      await page.goto(`${appUrl}${path}`);
      await settled(page, heading);
      expect(await page.getByRole('heading', { level: 1 }).count(), `${name}: one h1`).toBe(1);
      expect(await page.getByRole('navigation', { name: 'Main' }).count(), `${name}: nav "Main"`).toBe(1);
      expect(await page.getByRole('main').count(), `${name}: main`).toBe(1);
      expect(await page.getByRole('banner').count(), `${name}: header`).toBe(1);
      await screenshot(page, `${name}-${viewport}-${scheme}`);
      const violations = await axeViolations(page);
      if (violations.length > 0) found[name] = violations;
    }
    // States a path does not reach: the Jobs tab's run form open, with a field the API refused.
    await page.goto(`${appUrl}/services/${service.id}/jobs`);
    await settled(page, service.name);
    await page.getByRole('button', { name: 'Run a command' }).click();
    const runForm = page.getByRole('region', { name: 'Run a command' });
    await runForm.getByLabel('Command').fill('  ');
    await runForm.getByRole('button', { name: 'Start run' }).click();
    await runForm.getByRole('alert').waitFor();
    await screenshot(page, `service-jobs-run-form-${viewport}-${scheme}`);
    const formViolations = await axeViolations(page);
    if (formViolations.length > 0) found['service-jobs-run-form'] = formViolations;
    expect(found).toEqual({});
    await page.close();
  });
});

describe('signed out', () => {
  it.each(LAYOUTS)('at %s width, %s scheme: no violation', async (viewport, scheme) => {
    const context = await newContext(browser, { viewport, scheme });
    const page = await context.newPage();
    await page.goto(`${inject('web').appUrl}/services`);
    // Signing in is an action: a button, under a heading that says what the page is for.
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in to hostctl');
    await screenshot(page, `signed-out-${viewport}-${scheme}`);
    expect(await axeViolations(page)).toEqual([]);
    await context.close();
  });
});
