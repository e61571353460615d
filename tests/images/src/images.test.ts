import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextFiles } from './build-context.js';
import { composeConfig } from './compose-config.js';
import {
  buildImage,
  containerLogs,
  docker,
  ensureBaseImage,
  IMAGES,
  buildStageId,
  imageName,
  pruneStaleBuildStages,
  ROOT,
  runToEnd,
  startContainer,
  TAG,
  waitForHttp,
  type AppImage,
} from './docker-helpers.js';
import { ensureDashboardBuilt, freePort } from '@hostctl/testing';

// Builds the four images from docker/*.Dockerfile against a base image made from this machine's
// binaries, then runs them against the host's PostgreSQL and Redis: the API on a database it
// migrated itself (in production mode, secrets from files), the worker with the Docker socket, the
// dev identity provider, and the CI client image against that API.
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/hostctl_test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const database = `hostctl_images_${randomUUID().slice(0, 8)}`;
const databaseUrl = Object.assign(new URL(ADMIN_URL), { pathname: `/${database}` }).href;
const prefix = `img-${randomUUID().slice(0, 8)}`;
// The key-encryption key both images seal and open variables with (docs/secrets.md): one per run,
// like the database.
const KEK = randomBytes(32).toString('base64');
const secrets = mkdtempSync(path.join(tmpdir(), 'hostctl-image-secrets-'));
const containers: Docker.Container[] = [];
const built = new Map<AppImage, { id: string; seconds: number }>();

/** A secret file the container's uid 10001 can read, mounted read-only under /run/secrets. */
function secretFile(name: string, value: string): { bind: string; path: string } {
  const file = path.join(secrets, name);
  writeFileSync(file, `${value}\n`);
  chmodSync(file, 0o444);
  return { bind: `${file}:/run/secrets/${name}:ro`, path: `/run/secrets/${name}` };
}

beforeAll(async () => {
  await ensureBaseImage();
  // The API image carries the dashboard's built files (docker/api.Dockerfile).
  ensureDashboardBuilt(ROOT);
  const files = contextFiles(ROOT);
  const stages: string[] = [];
  for (const app of Object.keys(IMAGES) as AppImage[]) {
    const at = Date.now();
    const { id, log } = await buildImage(app, files);
    built.set(app, { id, seconds: Math.round((Date.now() - at) / 1000) });
    const stage = buildStageId(log);
    if (stage) stages.push(stage);
  }
  console.log(`image builds (s): ${[...built].map(([app, b]) => `${app} ${b.seconds}`).join(', ')}`);
  // This run's build stage stays as the next run's cache; the ones of older contexts go.
  await pruneStaleBuildStages(stages);
});

afterAll(async () => {
  await Promise.all(containers.map((container) => container.remove({ force: true }).catch(() => undefined)));
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin.end();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  rmSync(secrets, { recursive: true, force: true });
});

describe('the images', () => {
  it.each(Object.keys(IMAGES) as AppImage[])(
    '%s runs as a non-root user and declares a health check',
    async (app) => {
      const image = await docker.getImage(imageName(app)).inspect();
      expect(image.Config.User).toBe('10001:10001');
      // The CLI is a one-shot command: nothing to probe, and it says so rather than inheriting one.
      if (app === 'cli') expect(image.Config.Healthcheck?.Test).toEqual(['NONE']);
      else expect(image.Config.Healthcheck?.Test?.join(' ')).toContain('fetch(');
      // Only the bundle and its data: no TypeScript sources, no tsx, no pnpm store, nothing writable.
      const { output } = await runToEnd(imageName(app), {
        env: {},
        entrypoint: ['find'],
        cmd: [
          '/app',
          '(',
          '-name',
          '*.ts',
          '-o',
          '-name',
          '.pnpm',
          '-o',
          '-name',
          'tsx',
          '-o',
          '-user',
          '10001',
          ')',
        ],
      });
      expect(output).toBe('');
    },
  );

  it('are the images docker/compose.yml names', async () => {
    const config = await composeConfig({ HOSTCTL_TAG: TAG });
    const ours = Object.values(config.services)
      .map((service) => service.image)
      .filter((image) => image?.startsWith('hostctl/'));
    expect(new Set(ours)).toEqual(new Set([imageName('api'), imageName('worker')]));
    for (const [name, service] of Object.entries(config.services)) {
      if (!service.build) continue;
      const app = (Object.keys(IMAGES) as AppImage[]).find((key) => service.image === imageName(key));
      expect(service.build.dockerfile, name).toBe(app && IMAGES[app].dockerfile);
    }
  });
});

describe('api image', () => {
  let baseUrl: string;

  beforeAll(async () => {
    const databaseSecret = secretFile('database_url', databaseUrl);
    const migrated = await runToEnd(imageName('api'), {
      cmd: ['node', 'apps/api/dist/migrate.mjs'],
      env: { DATABASE_URL_FILE: databaseSecret.path },
      binds: [databaseSecret.bind],
    });
    expect(migrated.code, migrated.output).toBe(0);
    expect(migrated.output).toContain('"applied":[');

    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const sessionSecret = secretFile('session_secret', randomBytes(32).toString('hex'));
    const kekSecret = secretFile('secrets_kek', KEK);
    const api = await startContainer(imageName('api'), {
      env: {
        API_HOST: '127.0.0.1',
        API_PORT: String(port),
        DATABASE_URL_FILE: databaseSecret.path,
        REDIS_URL,
        QUEUE_PREFIX: prefix,
        SESSION_SECRET_FILE: sessionSecret.path,
        SECRETS_KEK_FILE: kekSecret.path,
        PUBLIC_URL: 'https://hostctl.images.test',
        OIDC_ISSUER: 'https://id.images.test',
      },
      binds: [databaseSecret.bind, sessionSecret.bind, kekSecret.bind],
    });
    containers.push(api);
    await waitForHttp(`${baseUrl}/readyz`).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await containerLogs(api)}`);
    });
  });

  it('answers /readyz, serves the API and the docs assets', async () => {
    expect(await (await fetch(`${baseUrl}/readyz`)).json()).toMatchObject({ status: 'ready' });
    expect((await fetch(`${baseUrl}/api/services`)).status).toBe(401);
    expect((await fetch(`${baseUrl}/api/openapi.json`)).status).toBe(200);
    expect((await fetch(`${baseUrl}/api/docs/assets/swagger-ui-bundle.js`)).status).toBe(200);
  });

  it('serves the dashboard at / with its CSP, and its hashed assets as immutable', async () => {
    const page = await fetch(`${baseUrl}/services`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await page.text();
    const script = /<script[^>]+src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script, html).toBeDefined();
    const asset = await fetch(`${baseUrl}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await asset.text()).length).toBeGreaterThan(10_000);
  });

  it('carries the bootstrap CLI, which reads the database URL from a secret file too', async () => {
    const databaseSecret = secretFile('database_url', databaseUrl);
    const name = `img-${randomUUID().slice(0, 8)}`;
    const { code, output } = await runToEnd(imageName('api'), {
      cmd: ['node', 'apps/api/dist/cli.mjs', 'customers', 'create', '--name', name, '--json'],
      env: { DATABASE_URL_FILE: databaseSecret.path },
      binds: [databaseSecret.bind],
    });
    expect(code, output).toBe(0);
    expect(output).toContain(`"name":"${name}"`);
  });

  it('is what the cli image talks to, with a key from the bootstrap CLI', async () => {
    const databaseSecret = secretFile('database_url', databaseUrl);
    const email = `ci-${randomUUID().slice(0, 8)}@images.test`;
    const bootstrap = (...args: string[]) =>
      runToEnd(imageName('api'), {
        cmd: ['node', 'apps/api/dist/cli.mjs', ...args, '--json'],
        env: { DATABASE_URL_FILE: databaseSecret.path },
        binds: [databaseSecret.bind],
      });
    expect(
      (await bootstrap('users', 'create', '--email', email, '--name', 'CI', '--role', 'viewer')).code,
    ).toBe(0);
    const created = await bootstrap('api-keys', 'create', '--email', email, '--name', 'ci');
    const key = /"key":"(hsk_[^"]+)"/.exec(created.output)?.[1];
    expect(key, created.output).toBeDefined();

    const cli = (token: string, ...cmd: string[]) =>
      runToEnd(imageName('cli'), { env: { HOSTCTL_URL: baseUrl, HOSTCTL_TOKEN: token }, cmd });
    const listed = await cli(key ?? '', 'services', 'list', '--json');
    expect(listed.code, listed.output).toBe(0);
    expect(listed.output).toContain('"total": 0');
    const refused = await cli('hsk_not_a_key', 'services', 'list');
    expect(refused.code, refused.output).toBe(5);
    // The image has no database client: the operator commands say where they are instead.
    const operator = await cli(key ?? '', 'customers', 'create', '--name', 'x');
    expect(operator.code).toBe(2);
    expect(operator.output).toContain('not in this build');
  });

  it('refuses to start in production with development settings', async () => {
    const { code, output } = await runToEnd(imageName('api'), {
      env: {
        API_PORT: String(await freePort()),
        DATABASE_URL: databaseUrl,
        SESSION_SECRET: 'test-secret-test-secret-test-secret-0123',
        OIDC_ISSUER: 'http://127.0.0.1:3100',
        COOKIE_SECURE: 'false',
        // Present, so what it refuses is the development settings, not a missing key.
        SECRETS_KEK: KEK,
      },
    });
    expect(code).not.toBe(0);
    for (const variable of ['SESSION_SECRET', 'OIDC_ISSUER', 'COOKIE_SECURE'])
      expect(output).toContain(`${variable}:`);
  });
});

describe('worker image', () => {
  it('reaches PostgreSQL, Redis and the Docker engine as uid 10001', async () => {
    const port = await freePort();
    const socket = '/var/run/docker.sock';
    const worker = await startContainer(imageName('worker'), {
      // Without CAP_NET_ADMIN as uid 10001 the worker refuses to start in enforce mode (compose runs
      // it as root with NET_ADMIN); this test is about reaching its dependencies.
      env: {
        DATABASE_URL: databaseUrl,
        REDIS_URL,
        QUEUE_PREFIX: prefix,
        WORKER_HEALTH_PORT: String(port),
        EGRESS_POLICY: 'off',
        SECRETS_KEK: KEK,
      },
      binds: [`${socket}:${socket}`],
      groupAdd: [String(statSync(socket).gid)],
    });
    containers.push(worker);
    const ready = await waitForHttp(`http://127.0.0.1:${port}/readyz`).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await containerLogs(worker)}`);
    });
    expect(await ready.json()).toMatchObject({
      status: 'ok',
      checks: { postgres: 'ok', redis: 'ok', docker: 'ok' },
    });
  });
});

describe('dev-idp image', () => {
  it('publishes its discovery document', async () => {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const idp = await startContainer(imageName('dev-idp'), {
      env: { DEV_IDP_HOST: '127.0.0.1', DEV_IDP_PORT: String(port), DEV_IDP_ISSUER: issuer },
    });
    containers.push(idp);
    const discovery = await waitForHttp(`${issuer}/.well-known/openid-configuration`).catch(
      async (error: Error) => {
        throw new Error(`${error.message}\n${await containerLogs(idp)}`);
      },
    );
    expect(await discovery.json()).toMatchObject({ issuer, authorization_endpoint: `${issuer}/auth` });
  });
});
