import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../../..');
export const DEV_IDP_CLIENT_SECRET = 'test-client-secret-0123456789abcdef';

export interface TestAccount {
  email: string;
  password: string;
  name: string;
}

export interface DevIdpProcess {
  issuer: string;
  stop(): Promise<void>;
}

/**
 * Starts the real dev identity provider (apps/dev-idp) as a child process on a random port, with
 * an accounts file of its own. Apps never import each other, so it runs through its entry point.
 */
export async function startDevIdpProcess(options: {
  accounts: TestAccount[];
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  /** A fixed port (a test of an API that started before its provider); random otherwise. */
  port?: number;
}): Promise<DevIdpProcess> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hostctl-idp-'));
  const accountsFile = path.join(dir, 'accounts.json');
  writeFileSync(accountsFile, JSON.stringify({ accounts: options.accounts }));
  const child = spawn(
    path.join(REPO_ROOT, 'node_modules/.bin/tsx'),
    [path.join(REPO_ROOT, 'apps/dev-idp/src/main.ts')],
    {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DEV_IDP_PORT: String(options.port ?? 0),
        DEV_IDP_ACCOUNTS: accountsFile,
        OIDC_CLIENT_SECRET: DEV_IDP_CLIENT_SECRET,
        DEV_IDP_REDIRECT_URIS: options.redirectUris.join(','),
        DEV_IDP_POST_LOGOUT_REDIRECT_URIS: options.postLogoutRedirectUris.join(','),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const issuer = await readyIssuer(child, () => stderr);
  return {
    issuer,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function readyIssuer(child: ChildProcess, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`dev-idp did not start within 60 s:\n${stderr()}`));
    }, 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`dev-idp exited with ${code}:\n${stderr()}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const message = JSON.parse(line) as { event?: string; issuer?: string };
        if (message.event === 'ready' && message.issuer) {
          clearTimeout(timer);
          resolve(message.issuer);
        }
      } catch {
        // not our ready line
      }
    });
  });
}
