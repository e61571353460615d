import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchChromium } from '@hostctl/testing';
import { axeViolations, newContext, screenshot, sessionOf, settled } from './browser.js';
import { WEB_DATABASE_URL } from './env.js';

/**
 * The platform's certificates in the dashboard (docs/tls.md, docs/dashboard.md), as an operator
 * of the platform finds them from the navigation. The web stack runs without ACME (stack.ts), so
 * the rows are written as the worker's certificate rounds write them: a wildcard that serves, a
 * custom domain near expiry, one whose renewal fails, one expired.
 */
const suffix = randomUUID().slice(0, 8);
const DAY = 86_400_000;
const names = {
  wildcard: `*.apps-${suffix}.test`,
  expiring: `expiring-${suffix}.test`,
  failing: `failing-${suffix}.test`,
  expired: `expired-${suffix}.test`,
};
let browser: Browser;
let pool: pg.Pool;

async function certificate(
  name: string,
  notAfterInDays: number,
  lastError: string | null,
  attemptedHoursAgo: number,
): Promise<void> {
  const now = Date.now();
  await pool.query(
    `INSERT INTO tls_certificates (name, certificate_pem, issuer, not_before, not_after, renew_after,
       last_error, last_attempt_at, issued_count, updated_at)
     VALUES ($1, '-----BEGIN CERTIFICATE-----', 'CN=Pebble Intermediate CA 1a2b3c', $2, $3, $4, $5, $6, 1, now())`,
    [
      name,
      new Date(now + (notAfterInDays - 90) * DAY),
      new Date(now + notAfterInDays * DAY + 3_600_000),
      new Date(now + (notAfterInDays - 30) * DAY),
      lastError,
      new Date(now - attemptedHoursAgo * 3_600_000),
    ],
  );
}

beforeAll(async () => {
  browser = await launchChromium();
  pool = new pg.Pool({ connectionString: WEB_DATABASE_URL, max: 1 });
  await certificate(names.wildcard, 60, null, 2);
  await certificate(names.expiring, 5, null, 1);
  await certificate(names.failing, 30, 'urn:ietf:params:acme:error:connection: 127.0.0.1:80 refused', 3);
  await certificate(names.expired, -2, null, 48);
});
afterAll(async () => {
  await pool?.query('DELETE FROM tls_certificates WHERE name = ANY($1)', [Object.values(names)]);
  await pool?.end();
  await browser?.close();
});

const cellsOf = async (page: Page, name: string) => {
  const row = page.getByRole('row', { name: new RegExp(name.replace(/[.*]/g, '\\$&')) });
  await row.waitFor();
  return (await row.getByRole('cell').allInnerTexts()).map((text) => text.trim());
};

describe('certificates', () => {
  it('lists each certificate with its state in words, days left, validity, issuer and last attempt', async () => {
    const context = await newContext(browser, { storageState: await sessionOf(browser, 'operator') });
    const page = await context.newPage();
    await page.goto(inject('web').appUrl);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Certificates' }).click();
    await settled(page, 'Certificates');

    // Headers name every column, the name of each certificate heads its row.
    expect(await page.getByRole('columnheader').allInnerTexts()).toEqual([
      'Covers',
      'State',
      'Days left',
      'Valid from',
      'Valid until',
      'Issuer',
      'Last renewal attempt',
    ]);
    const wildcard = await cellsOf(page, names.wildcard);
    expect(wildcard.slice(0, 2)).toEqual(['valid', '60 days']);
    expect(wildcard[4]).toBe('CN=Pebble Intermediate CA 1a2b3c');
    expect(wildcard[5]).toBe('2 hours ago');
    expect(
      await page
        .getByRole('rowheader', { name: new RegExp(`every service name under apps-${suffix}`) })
        .count(),
    ).toBe(1);

    expect((await cellsOf(page, names.expiring)).slice(0, 2)).toEqual(['expiring soon', '5 days']);
    const failing = await cellsOf(page, names.failing);
    expect(failing[0]).toBe(
      'renewal failed\nReason: urn:ietf:params:acme:error:connection: 127.0.0.1:80 refused',
    );
    expect(failing[1]).toBe('30 days');
    expect((await cellsOf(page, names.expired)).slice(0, 2)).toEqual(['expired', 'expired 2 days ago']);

    await screenshot(page, 'certificates');
    expect(await axeViolations(page)).toEqual([]);
    await context.close();
  });

  it('is not in the navigation of a customer’s viewer, and the address says it is not theirs', async () => {
    const context = await newContext(browser, { storageState: await sessionOf(browser, 'viewer') });
    const page = await context.newPage();
    await page.goto(inject('web').appUrl);
    await settled(page, 'Overview');
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link', { name: 'Services' }).count()).toBe(1);
    expect(await nav.getByRole('link', { name: 'Certificates' }).count()).toBe(0);
    await page.goto(`${inject('web').appUrl}/certificates`);
    await settled(page, 'Not allowed');
    expect(await page.getByText(names.wildcard).count()).toBe(0);
    await context.close();
  });
});
