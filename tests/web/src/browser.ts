import { readFileSync } from 'node:fs';
import path from 'node:path';
import axe from 'axe-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { inject } from 'vitest';
import { ROOT } from './stack.js';

export type DevRole = 'admin' | 'operator' | 'viewer';

interface DevAccount {
  email: string;
  password: string;
  name: string;
  role: DevRole;
  customer?: string;
}

/** The real dev accounts (apps/dev-idp/accounts.json), the ones README's first steps sign in with. */
const ACCOUNTS = (
  JSON.parse(readFileSync(path.join(ROOT, 'apps/dev-idp/accounts.json'), 'utf8')) as {
    accounts: DevAccount[];
  }
).accounts;

export function devAccount(role: DevRole): DevAccount {
  const account = ACCOUNTS.find((candidate) => candidate.role === role);
  if (!account) throw new Error(`apps/dev-idp/accounts.json has no ${role}`);
  return account;
}

export const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
export type ViewportName = keyof typeof VIEWPORTS;

export async function newContext(
  browser: Browser,
  options: { viewport?: ViewportName; scheme?: 'light' | 'dark'; storageState?: string } = {},
): Promise<BrowserContext> {
  return browser.newContext({
    viewport: VIEWPORTS[options.viewport ?? 'desktop'],
    colorScheme: options.scheme ?? 'light',
    ...(options.storageState ? { storageState: JSON.parse(options.storageState) as never } : {}),
  });
}

/**
 * Signs in the way a person does: the dashboard's signed-out state, its "Sign in" button, the dev
 * provider's form, and back to the page asked for.
 */
export async function signIn(page: Page, role: DevRole, at = '/'): Promise<void> {
  const { appUrl, issuer } = inject('web');
  const account = devAccount(role);
  await page.goto(`${appUrl}${at}`);
  await Promise.all([
    page.waitForURL((url) => url.href.startsWith(`${issuer}/interaction/`)),
    control(page, 'Sign in').click(),
  ]);
  await page.fill('input[name=email]', account.email);
  await page.fill('input[name=password]', account.password);
  await Promise.all([
    page.waitForURL((url) => url.href.startsWith(appUrl)),
    page.click('button[type=submit]:has-text("Sign in")'),
  ]);
}

/** A signed-in session to reuse across contexts (sign-in itself is tested once per role). */
export async function sessionOf(browser: Browser, role: DevRole): Promise<string> {
  const context = await newContext(browser);
  const page = await context.newPage();
  await signIn(page, role);
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  const state = JSON.stringify(await context.storageState());
  await context.close();
  return state;
}

/** A control by its visible name, whether the app made it a button or a link (both are real controls). */
export function control(page: Page, name: string) {
  return page
    .getByRole('button', { name, exact: true })
    .or(page.getByRole('link', { name, exact: true }))
    .first();
}

/** Waits until the screen has its one h1 and nothing is loading any more. */
export async function settled(page: Page, heading: string | RegExp): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  // A locator, not a page function: the dashboard's CSP forbids the eval a string predicate needs.
  await page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached', timeout: 15_000 });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  const { artifactsDir } = inject('web');
  await page.screenshot({ path: path.join(artifactsDir, `${name}.png`), fullPage: true });
}

const AXE_SOURCE = axe.source;
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/**
 * WCAG 2.1 A/AA violations axe-core finds on the page as it is now, one readable line each. axe is
 * evaluated through the DevTools protocol, so the dashboard's CSP (script-src 'self') stays on.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<AxeViolation[]>(
    `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG_TAGS)} }, resultTypes: ['violations'] })
      .then((result) => result.violations)`,
  );
  return violations.map(
    (v) =>
      `${v.id} (${v.impact ?? 'n/a'}): ${v.help} — ${v.nodes
        .slice(0, 3)
        .map(
          (node) =>
            `${node.target.join(' ')}${node.failureSummary ? ` [${node.failureSummary.replace(/\s+/g, ' ')}]` : ''}`,
        )
        .join('; ')}${v.nodes.length > 3 ? ` (+${v.nodes.length - 3} more)` : ''}`,
  );
}
