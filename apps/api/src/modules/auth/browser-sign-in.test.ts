import type { Browser } from 'playwright-core';
import { launchChromium } from '@hostctl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthHarness, provision, testAccount, type AuthHarness } from './test-support/auth-harness.js';
import { freePort } from '@hostctl/testing';
import { startDevIdpProcess, type DevIdpProcess } from './test-support/dev-idp-process.js';

const ivan = testAccount('ivan');
let publicUrl: string;
let idp: DevIdpProcess;
let h: AuthHarness;
let browser: Browser;

beforeAll(async () => {
  publicUrl = `http://127.0.0.1:${await freePort()}`;
  idp = await startDevIdpProcess({
    accounts: [ivan],
    redirectUris: [`${publicUrl}/api/auth/callback`],
    postLogoutRedirectUris: [`${publicUrl}/livez`],
  });
  // The default COOKIE_SECURE=true: browsers accept Secure cookies from http://127.0.0.1 (a
  // potentially trustworthy origin), so the browser path runs with production cookie attributes.
  h = await createAuthHarness({
    OIDC_ISSUER: idp.issuer,
    PUBLIC_URL: publicUrl,
    COOKIE_SECURE: '',
    OIDC_POST_LOGOUT_REDIRECT_URI: `${publicUrl}/livez`,
  });
  await provision(h.store, ivan, 'operator');
  await h.app.listen({ host: '127.0.0.1', port: Number(new URL(publicUrl).port) });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
  await idp?.stop();
});

describe('browser sign-in through the dev provider', () => {
  it('signs in, uses the session, manages a key, signs out, and the old cookie is dead', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();

    await page.goto(`${publicUrl}/api/auth/login?redirect=/api/auth/me`);
    expect(page.url().startsWith(`${idp.issuer}/interaction/`)).toBe(true);
    // A wrong password is refused by the provider's form.
    await page.fill('input[name=email]', ivan.email);
    await page.fill('input[name=password]', 'not-the-password');
    await page.click('button[type=submit]:has-text("Sign in")');
    await expect.poll(() => page.textContent('[role=alert]')).toMatch(/Invalid email or password/);

    await page.fill('input[name=password]', ivan.password);
    await Promise.all([
      page.waitForURL(`${publicUrl}/api/auth/me`),
      page.click('button[type=submit]:has-text("Sign in")'),
    ]);
    expect(JSON.parse((await page.textContent('body')) ?? '{}')).toMatchObject({
      email: ivan.email,
      role: 'operator',
    });

    // `__Host-`: Chromium accepted Secure, Path=/ and no Domain from http://127.0.0.1.
    const session = (await context.cookies(publicUrl)).find((cookie) => cookie.name === '__Host-session');
    expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
    // HttpOnly: page scripts cannot read it.
    expect(await page.evaluate<string>('document.cookie')).not.toContain('session=');

    const call = (method: string, path: string, body?: unknown) =>
      page
        .evaluate(
          async ([m, p, b]) => {
            const init: RequestInit = { method: m };
            if (b !== undefined)
              Object.assign(init, {
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify(b),
              });
            const response = await fetch(p, init);
            return { status: response.status, body: (await response.text()) || 'null' };
          },
          [method, path, body] as const,
        )
        .then((result) => ({
          status: result.status,
          body: JSON.parse(result.body) as Record<string, unknown>,
        }));

    const me = await call('GET', '/api/auth/me');
    expect(me).toMatchObject({ status: 200, body: { email: ivan.email } });

    // The browser sends Origin on its own, which the Origin check accepts.
    const created = await call('POST', '/api/auth/api-keys', { name: 'from the browser' });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^hsk_/);
    const listed = await call('GET', '/api/auth/api-keys');
    expect(listed.status).toBe(200);
    expect((listed.body.data as { id: string }[]).map((key) => key.id)).toContain(created.body.id);
    const viaKey = await fetch(`${publicUrl}/api/auth/me`, {
      headers: { authorization: `Bearer ${String(created.body.key)}` },
    });
    expect(viaKey.status).toBe(200);

    const out = await call('POST', '/api/auth/logout');
    expect(out.status).toBe(200);
    expect(out.body.message).toMatch(/signed out/i);
    const logoutUrl = String(out.body.logout_url);
    expect(logoutUrl.startsWith(`${idp.issuer}/session/end`)).toBe(true);

    // End the provider's session too, as the dashboard would, and come back to the app.
    await page.goto(logoutUrl);
    await Promise.all([page.waitForURL(`${publicUrl}/livez`), page.click('button[name=logout]')]);

    expect(
      (await context.cookies(publicUrl)).find((cookie) => cookie.name === '__Host-session'),
    ).toBeUndefined();
    expect((await call('GET', '/api/auth/me')).status).toBe(401);
    const replayed = await fetch(`${publicUrl}/api/auth/me`, {
      headers: { cookie: `__Host-session=${session!.value}` },
    });
    expect(replayed.status).toBe(401);

    // Signing in again needs the password: the provider's session ended as well.
    await page.goto(`${publicUrl}/api/auth/login`);
    expect(page.url().startsWith(`${idp.issuer}/interaction/`)).toBe(true);
    await context.close();
  });
});
