import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  composeConfig,
  portOf,
  renderCaddyTemplate,
  REQUIRED_ENV,
  runCompose,
  type ComposeService,
} from './compose-config.js';
import { ROOT } from './docker-helpers.js';

// docker/compose.yml, checked with the compose tool available here (Debian's docker-compose 1.29):
// it validates, refuses to start without the operator's settings, and keeps the production rules.
const envOf = (service: ComposeService) => service.environment ?? {};
const secretsOf = (service: ComposeService) =>
  (service.secrets ?? []).map((secret) => (typeof secret === 'string' ? secret : secret.source));

describe('docker/compose.yml', () => {
  it('validates with docker-compose config -q', async () => {
    await expect(runCompose(REQUIRED_ENV, ['-q'])).resolves.toBe('');
  });

  it.each(Object.keys(REQUIRED_ENV))('refuses to render without %s', async (name) => {
    const env: Record<string, string> = { ...REQUIRED_ENV };
    delete env[name];
    await expect(runCompose(env, ['-q'])).rejects.toThrow(new RegExp(`set ${name}`));
  });

  it('runs two API and two worker replicas behind Caddy, with PostgreSQL, Redis and PowerDNS', async () => {
    const { services } = await composeConfig();
    expect(Object.keys(services).sort()).toEqual(
      ['api-1', 'api-2', 'caddy', 'migrate', 'pdns', 'postgres', 'redis', 'worker-1', 'worker-2'].sort(),
    );
    for (const name of ['api-1', 'api-2']) expect(services[name]?.image).toBe(services['api-1']?.image);
    for (const name of ['worker-1', 'worker-2'])
      expect(services[name]?.image).toBe(services['worker-1']?.image);
    // Caddy balances over exactly the replicas' ports.
    const template = readFileSync(path.join(ROOT, 'docker/caddy.json.template'), 'utf8');
    const upstreams = [...template.matchAll(/"dial": "127\.0\.0\.1:(\d+)"/g)].map((m) => m[1]);
    expect(upstreams.sort()).toEqual(
      ['api-1', 'api-2'].map((name) => envOf(services[name] ?? {}).API_PORT).sort(),
    );
  });

  it('gives Caddy a valid config once the two names are filled in (as its command does)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'caddy-config-'));
    try {
      const config = renderCaddyTemplate(REQUIRED_ENV);
      writeFileSync(path.join(dir, 'caddy.json'), JSON.stringify(config));
      // `caddy validate` provisions the config without listening or contacting a CA.
      const { stdout, stderr } = await promisify(execFile)(
        'caddy',
        ['validate', '--config', path.join(dir, 'caddy.json')],
        {
          env: { PATH: process.env.PATH ?? '', XDG_CONFIG_HOME: dir, XDG_DATA_HOME: dir },
          timeout: 30_000,
        },
      );
      expect(`${stdout}${stderr}`).toContain('Valid configuration');
      // The worker inserts service routes into this server, ahead of the catch-all, as in the dev stack.
      expect(config.apps.http.servers.hostctl?.routes.map((route) => route['@id'])).toEqual([
        'hostctl-api-redirect',
        'hostctl-api',
        'hostctl-catch-all',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("serves HTTPS with the workers' wildcard, Caddy managing the API domain's certificate only", async () => {
    // caddy-https.test.ts runs this template; here, that it stays production-true.
    const config = renderCaddyTemplate(REQUIRED_ENV);
    const { http, tls } = config.apps;
    expect(http).toMatchObject({ http_port: 80, https_port: 443 });
    expect(http.servers.hostctl).toMatchObject({
      listen: [':80', ':443'],
      automatic_https: { disable: true },
      tls_connection_policies: [{ protocol_min: 'tls1.2' }],
    });
    expect(tls.certificates.automate).toEqual([REQUIRED_ENV.API_DOMAIN]);
    // Let's Encrypt (Caddy's default CA), with the operator's contact.
    expect(tls.automation.policies).toEqual([
      { issuers: [{ module: 'acme', email: REQUIRED_ENV.ACME_EMAIL }] },
    ]);
    const worker = envOf((await composeConfig()).services['worker-1'] ?? {});
    expect(worker).toMatchObject({
      ACME_DIRECTORY_URL: 'https://acme-v02.api.letsencrypt.org/directory',
      CADDY_HTTPS_LISTEN: ':443',
      APPS_SCHEME: 'https',
      DNS_PROVIDER: 'powerdns',
    });
    const staging = 'https://acme-staging-v02.api.letsencrypt.org/directory';
    const overridden = await composeConfig({ ACME_DIRECTORY_URL: staging });
    expect(envOf(overridden.services['worker-2'] ?? {}).ACME_DIRECTORY_URL).toBe(staging);
  });

  it('runs Redis with AOF and noeviction', async () => {
    const command = (await composeConfig()).services.redis?.command;
    const args = Array.isArray(command) ? command.join(' ') : String(command);
    expect(args).toContain('--appendonly yes');
    expect(args).toContain('--maxmemory-policy noeviction');
  });

  it('passes every secret as a file, never as a value or a default', async () => {
    const config = await composeConfig();
    const files = Object.values(config.secrets).map((secret) =>
      path.relative(path.join(ROOT, 'docker'), secret.file),
    );
    expect(files.every((file) => file.startsWith('secrets/'))).toBe(true);
    for (const [name, service] of Object.entries(config.services)) {
      for (const [key, value] of Object.entries(envOf(service))) {
        if (key.endsWith('_FILE'))
          expect(secretsOf(service), `${name}: ${key}`).toContain(path.basename(String(value)));
        else
          // An id names which key is in use (SECRETS_KEK_ID); it is not one.
          expect(
            /SECRET|PASSWORD|API_KEY|^DATABASE_URL$|^REDIS_URL$/.test(key) && !key.endsWith('_ID'),
            `${name}: ${key}=${value}`,
          ).toBe(false);
      }
    }
    for (const name of ['api-1', 'worker-1', 'migrate']) {
      expect(envOf(config.services[name] ?? {}).DATABASE_URL_FILE, name).toBe('/run/secrets/database_url');
    }
    expect(envOf(config.services['api-1'] ?? {})).toMatchObject({
      NODE_ENV: 'production',
      COOKIE_SECURE: 'true',
      SESSION_SECRET_FILE: '/run/secrets/session_secret',
      OIDC_ISSUER: REQUIRED_ENV.OIDC_ISSUER,
    });
  });

  it('listens on the host loopback for everything but the public HTTP(S) and DNS ports', async () => {
    const { services } = await composeConfig();
    // Caddy reaches hosted containers by their bridge addresses: only the host's network can.
    for (const name of ['caddy', 'api-1', 'api-2', 'worker-1', 'worker-2', 'migrate']) {
      expect(services[name]?.network_mode, name).toBe('host');
    }
    for (const name of ['api-1', 'api-2'])
      expect(envOf(services[name] ?? {}).API_HOST, name).toBe('127.0.0.1');
    for (const [name, service] of Object.entries(services)) {
      for (const { hostIp, target } of (service.ports ?? []).map(portOf)) {
        const isPublicDns = name === 'pdns' && target === 53;
        if (!isPublicDns) expect(hostIp, `${name} publishes ${target}`).toBe('127.0.0.1');
      }
    }
    const template = JSON.parse(readFileSync(path.join(ROOT, 'docker/caddy.json.template'), 'utf8')) as {
      admin: { listen: string };
    };
    expect(template.admin.listen).toBe('127.0.0.1:2019');
  });

  it('makes secret files with init-secrets.sh that agree with each other and are never overwritten', async () => {
    const copy = mkdtempSync(path.join(tmpdir(), 'init-secrets-'));
    try {
      writeFileSync(
        path.join(copy, 'init-secrets.sh'),
        readFileSync(path.join(ROOT, 'docker/init-secrets.sh')),
      );
      const run = () =>
        promisify(execFile)('bash', [path.join(copy, 'init-secrets.sh')], {
          env: { PATH: process.env.PATH ?? '', OIDC_CLIENT_SECRET: 'from-the-idp' },
        });
      await run();
      const read = (name: string) => readFileSync(path.join(copy, 'secrets', name), 'utf8').trim();
      const password = read('postgres_password');
      expect(password).toMatch(/^[0-9a-f]{48}$/);
      expect(read('database_url')).toBe(`postgresql://hostctl:${password}@127.0.0.1:5432/hostctl`);
      const redisPassword = read('redis.conf').replace(/^requirepass /, '');
      expect(read('redis_url')).toBe(`redis://:${redisPassword}@127.0.0.1:6379`);
      expect(read('session_secret')).toMatch(/^[0-9a-f]{64}$/);
      expect(read('pdns_api.conf')).toBe(`api-key=${read('pdns_api_key')}`);
      expect(read('oidc_client_secret')).toBe('from-the-idp');
      const before = read('session_secret');
      await run();
      expect(read('session_secret')).toBe(before);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
