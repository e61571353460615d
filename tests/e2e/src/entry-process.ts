import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { E2E_DATABASE_URL, REDIS_URL } from './env.js';
import { ROOT } from './stack.js';

/**
 * An app's entry (`apps/<app>/src/main.ts`) run as production runs it, until it exits; one still
 * running after a minute is killed (code null): a process that should have stopped hung instead.
 */
export function runEntry(
  entry: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'test',
        DATABASE_URL: E2E_DATABASE_URL,
        REDIS_URL,
        QUEUE_PREFIX: `e2e-key-${randomUUID().slice(0, 8)}`,
        SESSION_SECRET: randomBytes(32).toString('hex'),
        API_PORT: '0',
        WORKER_HEALTH_PORT: '0',
        EGRESS_POLICY: 'off',
        LOG_LEVEL: 'fatal',
        ...env,
      },
      stdio: 'pipe',
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const bound = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(bound);
      resolve({ code, output });
    });
  });
}
