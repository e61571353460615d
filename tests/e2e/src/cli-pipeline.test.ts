import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '@hostctl/testing';
import { TEST_IMAGE } from './env.js';
import { ROOT, startStack, type Stack } from './stack.js';

/**
 * A CI pipeline driving `hostctl` as a process against a real api + worker: the exit code of
 * `deploy --wait` is the outcome of the deployment (docs/ci.md). The CLI runs as the CLI image
 * runs it, the esbuild bundle of docker/bundle.mjs (and starts in a fraction of the time tsx
 * needs); one call goes through the package's bin.
 */
const BIN = path.join(ROOT, 'apps/cli/bin/hostctl.mjs');
const suffix = Date.now().toString(36);
const scratch = mkdtempSync(path.join(tmpdir(), 'hostctl-cli-e2e-'));
const BUNDLE = path.join(scratch, 'bundle/cli/apps/cli/dist/hostctl.mjs');
let stack: Stack;
let operatorKey: string;
let viewerKey: string;
let customerId: string;
let operatorEmail: string;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runNode(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** Runs the CLI the way a CI job does: HOSTCTL_URL and HOSTCTL_TOKEN, no stored login. */
function hostctl(token: string, ...args: string[]): Promise<Run> {
  return runNode([BUNDLE, ...args], ciEnv(token));
}

function ciEnv(token: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOSTCTL_URL: stack.apiUrl, HOSTCTL_TOKEN: token };
  env.XDG_CONFIG_HOME = path.join(scratch, 'config');
  delete env.HOSTCTL_TOKEN_FILE;
  return env;
}

function composeFile(name: string, body: string): string {
  const file = path.join(scratch, `${name}.yml`);
  writeFileSync(file, `services:\n  web:\n    image: ${TEST_IMAGE}\n${body}`);
  return file;
}

async function createService(name: string, compose: string): Promise<string> {
  const created = await hostctl(
    operatorKey,
    'services',
    'create',
    '--name',
    name,
    '--customer',
    customerId,
    '--compose-file',
    compose,
    '--json',
  );
  expect(created.code, created.stderr).toBe(0);
  return (JSON.parse(created.stdout) as { id: string }).id;
}

beforeAll(async () => {
  const bundled = await runNode(['docker/bundle.mjs', path.join(scratch, 'bundle'), 'cli'], process.env);
  expect(bundled.code, bundled.stderr).toBe(0);
  stack = await startStack();
  customerId = (await stack.cli('customers', 'create', '--name', `cli-${suffix}`)).id as string;
  const user = async (role: string) => {
    const email = `${role}-${suffix}@cli.e2e.test`;
    await stack.cli(
      'users',
      'create',
      '--email',
      email,
      '--name',
      role,
      '--role',
      role,
      '--customer',
      customerId,
    );
    return {
      email,
      key: (await stack.cli('api-keys', 'create', '--email', email, '--name', 'ci')).key as string,
    };
  };
  const operator = await user('operator');
  operatorKey = operator.key;
  operatorEmail = operator.email;
  viewerKey = (await user('viewer')).key;
  // Five operator CLI processes and two app processes on a shared 2-core machine.
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

describe('hostctl in a pipeline', () => {
  const good = `cli-good-${suffix}`;
  const broken = `cli-broken-${suffix}`;
  const slow = `cli-slow-${suffix}`;

  it('deploy --wait exits 0 on a good release, streaming its log and printing the deployment', async () => {
    await createService(good, composeFile(good, '    ports: ["8080"]\n'));
    const result = await hostctl(operatorKey, 'deploy', good, '--wait', '--timeout', '120', '--json');
    expect(result.code, result.stderr).toBe(0);
    const deployment = JSON.parse(result.stdout) as { status: string; trigger: string; logs?: unknown };
    expect(deployment).toMatchObject({ status: 'succeeded', trigger: 'redeploy' });
    expect(deployment.logs).toBeUndefined();
    expect(result.stderr).toContain(TEST_IMAGE);
    expect(result.stderr).not.toContain(operatorKey);
  });

  it('services list --json parses and holds the service; SERVICE resolves by name', async () => {
    // Through the package's bin (tsx and the sources) rather than the bundle.
    const list = await runNode([BIN, 'services', 'list', '--search', good, '--json'], ciEnv(operatorKey));
    expect(list.code, list.stderr).toBe(0);
    const page = JSON.parse(list.stdout) as { data: { name: string; status: string }[]; total: number };
    expect(page.data).toEqual([expect.objectContaining({ name: good, status: 'running' })]);
    const events = await hostctl(operatorKey, 'events', good, '--json');
    expect(events.code, events.stderr).toBe(0);
    expect((JSON.parse(events.stdout) as { data: { type: string }[] }).data.length).toBeGreaterThan(0);
  });

  it('deploy --wait exits 1 when the release is broken, with the reason', async () => {
    await createService(broken, composeFile(broken, '    command: ["sh", "-c", "echo boom; exit 3"]\n'));
    const result = await hostctl(operatorKey, 'deploy', broken, '--wait', '--timeout', '120');
    expect(result.code, result.stderr).toBe(1);
    // The worker's reason, with the container's last output.
    expect(result.stderr).toMatch(/deployment \S+ failed: verify step failed: container web .*\n.*boom/);
  });

  it('deploy --wait exits 3 when the wait is shorter than the deploy, and the deployment goes on', async () => {
    // The port opens only after 6 s, so the worker's readiness check holds the deployment that long.
    await createService(
      slow,
      composeFile(
        slow,
        '    command: ["sh", "-c", "sleep 6; exec httpd -f -p 8080 -h /www"]\n    ports: ["8080"]\n',
      ),
    );
    const result = await hostctl(operatorKey, 'deploy', slow, '--wait', '--timeout', '1', '--json');
    expect(result.code, result.stderr).toBe(3);
    expect(result.stderr).toContain('goes on');
    const { id } = JSON.parse(result.stdout) as { id: string };
    const outcome = await apiClient(stack.apiUrl, operatorKey).get<{ status: string }>(
      `/api/deployments/${id}?wait=120`,
    );
    expect(outcome.body.status).toBe('succeeded');
  });

  it('exits 5 for a viewer deploying, an unknown token and a revoked one', async () => {
    const viewer = await hostctl(viewerKey, 'deploy', good, '--wait');
    expect(viewer.code, viewer.stderr).toBe(5);
    expect(viewer.stderr).toContain('may not perform this action');

    const unknown = await hostctl('hsk_not_a_real_key_0123456789abcdef', 'deploy', good, '--wait');
    expect(unknown.code, unknown.stderr).toBe(5);

    const spare = (await stack.cli('api-keys', 'create', '--email', operatorEmail, '--name', 'spare')) as {
      id: string;
      key: string;
    };
    const revoked = await apiClient(stack.apiUrl, operatorKey).delete(`/api/auth/api-keys/${spare.id}`);
    expect(revoked.status).toBe(204);
    const afterRevoke = await hostctl(spare.key, 'deploy', good, '--wait');
    expect(afterRevoke.code, afterRevoke.stderr).toBe(5);
    expect(`${viewer.stderr}${unknown.stderr}${afterRevoke.stderr}`).not.toContain(spare.key);
  });

  it('deletes what it created', async () => {
    for (const name of [good, broken, slow]) {
      const deleted = await hostctl(operatorKey, 'services', 'delete', name, '--yes', '--json');
      expect(deleted.code, deleted.stderr).toBe(0);
    }
  });
});
