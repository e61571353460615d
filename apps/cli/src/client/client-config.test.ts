import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { operatorEnv } from '../operator.js';
import { fakeApi, run, TOKEN } from '../test-support/fake-api.js';
import { configFilePath, loadClientConfig } from './client-config.js';

let home: string;
let env: Record<string, string | undefined>;
const file = () => path.join(home, 'hostctl', 'config.json');

beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'hostctl-config-'));
  env = { XDG_CONFIG_HOME: home };
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

function store(content: unknown, mode: number) {
  mkdirSync(path.dirname(file()), { recursive: true });
  writeFileSync(file(), JSON.stringify(content));
  chmodSync(file(), mode);
}

describe('where a token may be sent (issue 27, class 9)', () => {
  it('never to a default address: a token without HOSTCTL_URL is a usage error (exit 2), nothing sent', async () => {
    const api = fakeApi({});
    const result = await run(['services', 'list'], api.fetchImpl, { ...env, HOSTCTL_TOKEN: TOKEN });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('HOSTCTL_URL is not set');
    expect(api.requests).toEqual([]);
  });

  it('not over plain http:// to a remote host unless --insecure; loopback and https are fine', async () => {
    const remote = { ...env, HOSTCTL_TOKEN: TOKEN, HOSTCTL_URL: 'http://panel.example' };
    const api = fakeApi({});
    const refused = await run(['services', 'list'], api.fetchImpl, remote);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('refusing to send the token over plain http:// to panel.example');
    expect(api.requests).toEqual([]);
    expect(loadClientConfig(remote, { allowInsecure: true }).url).toBe('http://panel.example');
    for (const url of [
      'http://127.0.0.1:3000',
      'http://localhost:3000',
      'http://[::1]:3000',
      'https://panel.example',
    ])
      expect(loadClientConfig({ ...env, HOSTCTL_TOKEN: 't', HOSTCTL_URL: url }).url).toBe(url);
  });

  it('a stored login over plain http to a remote host is refused the same way', () => {
    store({ url: 'http://10.1.2.3:3000', token: 'stored' }, 0o600);
    expect(() => loadClientConfig(env)).toThrow('refusing to send the token over plain http://');
  });
});

describe('where URL and token come from', () => {
  it('uses HOSTCTL_URL and HOSTCTL_TOKEN first', () => {
    expect(loadClientConfig({ ...env, HOSTCTL_URL: 'https://api.example/', HOSTCTL_TOKEN: 't' })).toEqual({
      url: 'https://api.example',
      token: 't',
    });
  });

  it('reads HOSTCTL_TOKEN_FILE and refuses both variables at once', () => {
    const secret = path.join(home, 'token');
    writeFileSync(secret, 'from-file\n');
    expect(
      loadClientConfig({ ...env, HOSTCTL_URL: 'https://api.example', HOSTCTL_TOKEN_FILE: secret }).token,
    ).toBe('from-file');
    expect(() => loadClientConfig({ ...env, HOSTCTL_TOKEN_FILE: secret, HOSTCTL_TOKEN: 'x' })).toThrow(
      'either HOSTCTL_TOKEN or HOSTCTL_TOKEN_FILE',
    );
  });

  it('uses the stored file when it is private', () => {
    store({ url: 'https://stored.example', token: 'stored' }, 0o600);
    expect(loadClientConfig(env)).toEqual({ url: 'https://stored.example', token: 'stored' });
    expect(configFilePath(env)).toBe(file());
  });

  it('sends a stored token only to the URL it was stored with', () => {
    store({ url: 'https://stored.example', token: 'stored' }, 0o600);
    expect(loadClientConfig({ ...env, HOSTCTL_URL: 'https://stored.example/' }).token).toBe('stored');
    expect(() => loadClientConfig({ ...env, HOSTCTL_URL: 'https://elsewhere.example' })).toThrow(
      'is not the API the stored login is for',
    );
    // A token variable replaces the stored login entirely, URL included: it needs its own.
    expect(loadClientConfig({ ...env, HOSTCTL_URL: 'https://other.example', HOSTCTL_TOKEN: 't' })).toEqual({
      url: 'https://other.example',
      token: 't',
    });
  });

  it.each([0o640, 0o604, 0o644])('refuses a stored file with mode %o', (mode) => {
    store({ token: 'stored' }, mode);
    expect(() => loadClientConfig(env)).toThrow(`run \`chmod 600 ${file()}\``);
  });

  it('asks for a token when there is none, with exit 2', async () => {
    const result = await run(['services', 'list'], fakeApi({}).fetchImpl, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no API token: set HOSTCTL_TOKEN');
  });

  it('refuses URLs that are not http(s) or that carry credentials', () => {
    expect(() => loadClientConfig({ HOSTCTL_URL: 'ftp://x', HOSTCTL_TOKEN: 't' })).toThrow(
      'http:// or https://',
    );
    expect(() => loadClientConfig({ HOSTCTL_URL: 'https://u:p@x', HOSTCTL_TOKEN: 't' })).toThrow(
      'credentials',
    );
  });
});

describe('login and logout', () => {
  it('checks the token, stores it with mode 0600 and never prints it', async () => {
    const api = fakeApi({
      'GET /api/auth/me': [200, { email: 'ci@shop.test', role: 'operator', customer_id: 'c1' }],
    });
    const result = await run(
      ['login', '--url', 'https://api.example', '--token-stdin'],
      api.fetchImpl,
      env,
      `${TOKEN}\n`,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('logged in to https://api.example as ci@shop.test (operator)');
    expect(`${result.stdout}${result.stderr}`).not.toContain(TOKEN);
    expect(api.requests[0]?.authorization).toBe(`Bearer ${TOKEN}`);
    expect(statSync(file()).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file())).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file(), 'utf8'))).toEqual({ url: 'https://api.example', token: TOKEN });
    // The stored login is what the next command uses.
    const next = fakeApi({ 'GET /api/services': [200, { data: [], total: 0, page: 1, per_page: 20 }] });
    expect((await run(['services', 'list'], next.fetchImpl, env)).code).toBe(0);
    expect(next.requests[0]?.url.origin).toBe('https://api.example');

    expect((await run(['logout'], api.fetchImpl, env)).stdout).toContain('removed');
    expect(() => statSync(file())).toThrow();
  });

  it('stores nothing when the API refuses the token (exit 5)', async () => {
    const api = fakeApi({
      'GET /api/auth/me': [401, { status: 401, title: 'Unauthorized', detail: 'unknown API key' }],
    });
    const result = await run(
      ['login', '--url', 'https://api.test', '--token-stdin'],
      api.fetchImpl,
      env,
      'hsk_wrong',
    );
    expect(result.code).toBe(5);
    expect(() => statSync(file())).toThrow();
  });
});

describe('operator commands find the dev stack database', () => {
  it('takes DATABASE_URL (only that) from .data/env when the environment has none', () => {
    const envFile = path.join(home, 'env');
    writeFileSync(
      envFile,
      '# generated\nDATABASE_URL=postgresql://postgres@127.0.0.1:5432/hostctl\nSESSION_SECRET=x\n',
    );
    expect(operatorEnv({}, envFile)).toEqual({
      env: { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/hostctl' },
      source: envFile,
    });
    expect(operatorEnv({ DATABASE_URL: 'postgresql://other' }, envFile).env.DATABASE_URL).toBe(
      'postgresql://other',
    );
    expect(operatorEnv({ DATABASE_URL_FILE: '/run/secrets/db' }, envFile).env.DATABASE_URL).toBeUndefined();
    expect(operatorEnv({}, path.join(home, 'missing')).env.DATABASE_URL).toBeUndefined();
  });
});
