import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureDatabase, migrate, MIGRATIONS_DIR } from '@hostctl/db';
import { ensureDashboardBuilt, freePort, startGitServer } from '@hostctl/testing';
import { adminApiKey, customerIds, removeDockerObjects, resetState } from './cleanup.js';
import { WEB_DATABASE_URL } from './env.js';
import {
  ROOT,
  runScript,
  stackEnv,
  startApp,
  startDevIdp,
  stopAll,
  waitReady,
  type Running,
  type WebStack,
} from './stack.js';

declare module 'vitest' {
  export interface ProvidedContext {
    web: WebStack;
  }
}

/**
 * One stack for every test file (starting one takes most of the project's time): the real dev
 * identity provider with the dev accounts, the API serving the built dashboard, one worker, a git
 * server, and the seed data (`pnpm db:seed`) plus an admin API key for arranging through the API.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureDashboardBuilt(ROOT);
  await ensureDatabase(WEB_DATABASE_URL);
  await migrate(WEB_DATABASE_URL, MIGRATIONS_DIR);
  await resetState();

  const artifactsDir = path.join(ROOT, '.data/artifacts/web', new Date().toISOString().replace(/[:.]/g, '-'));
  mkdirSync(artifactsDir, { recursive: true });

  const appUrl = `http://127.0.0.1:${await freePort()}`;
  const clientSecret = `web-tests-${Math.random().toString(36).slice(2)}${Date.now()}`;
  const running: Running[] = [];
  const backupPath = mkdtempSync(path.join(tmpdir(), 'hostctl-web-backups-'));
  const removeBackups = () => rmSync(backupPath, { recursive: true, force: true });
  const git = await startGitServer();
  try {
    // Everything starts at once: the API discovers the provider lazily, at the first sign-in.
    const idpPort = await freePort();
    const issuer = `http://127.0.0.1:${idpPort}`;
    const env = stackEnv({ appUrl, issuer, clientSecret, backupPath });
    const api = startApp('apps/api/src/main.ts', env);
    const worker = startApp('apps/worker/src/main.ts', env);
    running.push(api, worker);
    const starting = startDevIdp(appUrl, clientSecret, idpPort);
    // Stopped with the rest even when another part of the start fails.
    void starting.then(
      (idp) => running.push(idp),
      () => undefined,
    );
    const [idp, adminKey] = await Promise.all([
      starting,
      // The real `pnpm db:seed` script, then an admin key for arranging through the API.
      runScript(['packages/db/src/seed-cli.ts'], { DATABASE_URL: WEB_DATABASE_URL }).then(adminApiKey),
      waitReady(`${appUrl}/readyz`, api),
    ]);
    if (idp.issuer !== issuer) throw new Error(`dev-idp announced ${idp.issuer}, expected ${issuer}`);
    project.provide('web', {
      appUrl,
      issuer,
      adminKey,
      customers: await customerIds(),
      gitBase: `git://127.0.0.1:${git.port}`,
      artifactsDir,
    });
    // The repositories of the git and ai tests, pushed before any test runs.
    await (
      await git.repo('static-site')
    ).push({
      'index.html': '<h1>hello from git</h1>\n',
      Dockerfile:
        'FROM local/busybox:1\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\nEXPOSE 8080\n',
    });
    await (await git.repo('plain-site')).push({ 'index.html': '<h1>hello from ai</h1>\n' });
  } catch (error) {
    await stopAll(running);
    await git.close();
    removeBackups();
    throw error;
  }
  console.log(`web tests: dashboard ${appUrl}, screenshots in ${path.relative(ROOT, artifactsDir)}/`);

  return async () => {
    await stopAll(running);
    await git.close();
    await removeDockerObjects();
    removeBackups();
    console.log(`web tests: screenshots in ${path.relative(ROOT, artifactsDir)}/`);
  };
}
