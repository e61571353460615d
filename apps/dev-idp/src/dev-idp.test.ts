import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAccounts } from './accounts.js';
import { startDevIdp, type DevIdp } from './server.js';

const REDIRECT = 'http://127.0.0.1:39998/api/auth/callback';
const SECRET = 'dev-idp-test-secret';
const ACCOUNTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../accounts.json');
let idp: DevIdp;

beforeAll(async () => {
  idp = await startDevIdp({
    host: '127.0.0.1',
    port: 0,
    accountsFile: ACCOUNTS,
    clientId: 'hostctl-dashboard',
    clientSecret: SECRET,
    redirectUris: [REDIRECT],
    postLogoutRedirectUris: ['http://127.0.0.1:39998/'],
  });
});
afterAll(async () => idp?.close());

/** The provider's cookies, carried across requests like a browser would. */
function createJar() {
  const cookies = new Map<string, string>();
  return {
    store(headers: Headers) {
      for (const line of headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const at = pair.indexOf('=');
        cookies.set(pair.slice(0, at), pair.slice(at + 1));
      }
    },
    header: () => [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
  };
}

function authorizeUrl(extra: Record<string, string> = {}) {
  const verifier = randomBytes(32).toString('base64url');
  const url = new URL(`${idp.issuer}/auth`);
  const params = {
    client_id: 'hostctl-dashboard',
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid email profile hostctl',
    state: randomBytes(16).toString('base64url'),
    nonce: randomBytes(16).toString('base64url'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    ...extra,
  };
  for (const [key, value] of Object.entries(params)) if (value !== '') url.searchParams.set(key, value);
  return { url: url.href, verifier };
}

/** Goes to the login form; returns its URL and the jar holding the interaction cookie. */
async function openLoginForm(url: string) {
  const jar = createJar();
  const first = await fetch(url, { redirect: 'manual' });
  jar.store(first.headers);
  expect(first.status).toBe(303);
  const form = new URL(first.headers.get('location')!, idp.issuer);
  const page = await fetch(form, { headers: { cookie: jar.header() } });
  return { jar, form, html: await page.text(), status: page.status };
}

async function submit(form: URL, jar: ReturnType<typeof createJar>, email: string, password: string) {
  const response = await fetch(new URL(`${form.pathname}/login`, form), {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email, password }).toString(),
  });
  jar.store(response.headers);
  return response;
}

describe('dev identity provider', () => {
  it('publishes discovery with PKCE S256 and RP-initiated logout', async () => {
    const response = await fetch(`${idp.issuer}/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    const metadata = (await response.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ issuer: idp.issuer, code_challenge_methods_supported: ['S256'] });
    expect(metadata.end_session_endpoint).toBe(`${idp.issuer}/session/end`);
  });

  it('requires PKCE', async () => {
    const response = await fetch(authorizeUrl({ code_challenge: '', code_challenge_method: '' }).url, {
      redirect: 'manual',
    });
    const location = new URL(response.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get('error')).toBe('invalid_request');
  });

  it('refuses an unregistered redirect URI without redirecting', async () => {
    const response = await fetch(authorizeUrl({ redirect_uri: 'http://127.0.0.1:1/evil' }).url, {
      redirect: 'manual',
    });
    expect(response.status).toBe(400);
    expect(await response.text()).not.toContain('fonts.googleapis');
  });

  it('checks the password, consents automatically and puts email and name in the ID token', async () => {
    const { url, verifier } = authorizeUrl();
    const { jar, form, html, status } = await openLoginForm(url);
    expect(status).toBe(200);
    expect(html).toContain('name="password"');
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/); // nothing loaded from elsewhere

    const wrong = await submit(form, jar, 'viewer@acme.example.test', 'wrong');
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('Invalid email or password');

    const right = await submit(form, jar, 'Viewer@Acme.example.test', 'viewer-dev-password');
    expect(right.status).toBe(303);
    const resumed = await fetch(new URL(right.headers.get('location')!, idp.issuer), {
      redirect: 'manual',
      headers: { cookie: jar.header() },
    });
    const callback = new URL(resumed.headers.get('location')!);
    expect(callback.origin + callback.pathname).toBe(REDIRECT);
    const code = callback.searchParams.get('code')!;
    expect(code).toBeTruthy();

    const token = await fetch(`${idp.issuer}/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`hostctl-dashboard:${SECRET}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      }).toString(),
    });
    expect(token.status).toBe(200);
    const { id_token: idToken } = (await token.json()) as { id_token: string };
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect(claims).toMatchObject({
      iss: idp.issuer,
      aud: 'hostctl-dashboard',
      email: 'viewer@acme.example.test',
      email_verified: true,
      name: 'Vera Viewer',
      role: 'viewer',
      customer: 'acme',
    });
    expect(claims.sub).toMatch(/^dev-[0-9a-f]{16}$/);
  });
});

describe('accounts file', () => {
  it('ships the documented development accounts', () => {
    const book = loadAccounts(ACCOUNTS);
    expect(book.all.map((account) => [account.email, account.role, account.customer])).toEqual([
      ['admin@example.test', 'admin', undefined],
      ['operator@example.test', 'operator', undefined],
      ['viewer@acme.example.test', 'viewer', 'acme'],
      ['operator@acme.example.test', 'operator', 'acme'],
    ]);
    expect(book.verify('admin@example.test', 'admin-dev-password')?.email).toBe('admin@example.test');
    expect(book.verify('admin@example.test', 'operator-dev-password')).toBeUndefined();
    expect(book.verify('nobody@example.test', 'admin-dev-password')).toBeUndefined();
  });

  it.each([
    [{ accounts: [{ email: 'a@x.test', password: 'p', name: 'A', role: 'root' }] }, /role/],
    [{ accounts: [{ email: 'a@x.test', name: 'A' }] }, /password/],
    [
      {
        accounts: [
          { email: 'a@x.test', password: 'p', name: 'A' },
          { email: 'A@x.test', password: 'q', name: 'B' },
        ],
      },
      /duplicate/,
    ],
    [{ users: [] }, /accounts/],
  ])('refuses an invalid file %#', (content, message) => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'idp-accounts-')), 'accounts.json');
    writeFileSync(file, JSON.stringify(content));
    expect(() => loadAccounts(file)).toThrow(message);
  });
});
