import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from './stack.js';

const BIN = path.join(ROOT, 'apps/cli/bin/hostctl.mjs');
/** One config directory for the run, never the user's: no stored login is read or written. */
const CONFIG_HOME = mkdtempSync(path.join(tmpdir(), 'hostctl-e2e-config-'));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** When each piece of stdout arrived (`run` and `exec` print while the command runs). */
  arrivals: { at: number; text: string }[];
}

/**
 * The workspace's `hostctl` as a CI job or a script runs it: HOSTCTL_URL and HOSTCTL_TOKEN from
 * the environment, stdin piped (not a TTY) and closed after `input`.
 */
export function hostctlProcess(
  target: { apiUrl: string; token: string; input?: string },
  ...args: string[]
): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOSTCTL_URL: target.apiUrl,
    HOSTCTL_TOKEN: target.token,
    XDG_CONFIG_HOME: CONFIG_HOME,
  };
  delete env.HOSTCTL_TOKEN_FILE;
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env });
  const run: CliRun = { code: null, stdout: '', stderr: '', arrivals: [] };
  child.stdout.on('data', (chunk: Buffer) => {
    run.stdout += chunk.toString();
    run.arrivals.push({ at: Date.now(), text: chunk.toString() });
  });
  child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
  child.stdin.end(target.input ?? '');
  return new Promise((resolve) => child.on('close', (code) => resolve({ ...run, code })));
}
