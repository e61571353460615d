import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Docker from 'dockerode';
import pg from 'pg';
import { migrate } from '@hostctl/db';
import { TEST_DATABASE_URL, TEST_IMAGE } from './test-env.js';

/**
 * Runs once before the worker tests: creates and migrates the worker's own test database and
 * checks the engine has the local test image (the stack scripts build it; no registry is reachable).
 */
export default async function setup(): Promise<void> {
  await ensureDatabase(TEST_DATABASE_URL);
  const migrations = path.resolve(
    path.dirname(fileURLToPath(import.meta.url)),
    '../../../../prisma/migrations',
  );
  await migrate(TEST_DATABASE_URL, migrations);
  const docker = new Docker({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' });
  await docker.ping();
  await docker
    .getImage(TEST_IMAGE)
    .inspect()
    .catch(() => {
      throw new Error(
        `the test image ${TEST_IMAGE} is missing: build it as STACK-NOTES describes (busybox-static rootfs + docker import)`,
      );
    });
}

async function ensureDatabase(url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } catch (error) {
    // Two suites creating it at once: the loser sees a duplicate, which is fine.
    if ((error as { code?: string }).code !== '42P04' && (error as { code?: string }).code !== '23505')
      throw error;
  } finally {
    await client.end();
  }
}
