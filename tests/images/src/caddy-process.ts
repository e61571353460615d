import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A `caddy run` of this machine's Caddy (Debian's 2.6) with its admin API and its log. */
export interface CaddyProcess {
  /** One admin API call; the answer's status and body. */
  admin(method: string, apiPath: string, body?: unknown): Promise<{ status: number; text: string }>;
  /** Everything Caddy logged so far (one JSON object per line). */
  log(): string;
  /**
   * Makes Caddy log a line naming `marker` (the admin API logs each request it receives) and
   * resolves once it is read: whatever Caddy logged before that call is in log() by then.
   */
  logBarrier(marker: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts Caddy on `config` with its storage in a fresh directory; resolves once its admin API answers. */
export async function startCaddy(config: { admin: { listen: string } }): Promise<CaddyProcess> {
  const dir = mkdtempSync(path.join(tmpdir(), 'caddy-run-'));
  writeFileSync(path.join(dir, 'caddy.json'), JSON.stringify(config));
  const child = spawn('caddy', ['run', '--config', path.join(dir, 'caddy.json')], {
    env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_CONFIG_HOME: dir, XDG_DATA_HOME: dir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  let exited = false;
  const readers: (() => void)[] = [];
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    log += chunk;
    for (const reader of readers.splice(0)) reader();
  });
  child.on('exit', () => {
    exited = true;
    for (const reader of readers.splice(0)) reader();
  });
  const nextChunk = () => new Promise<void>((resolve) => readers.push(resolve));
  const adminUrl = `http://${config.admin.listen}`;

  async function admin(method: string, apiPath: string, body?: unknown) {
    const response = await fetch(`${adminUrl}${apiPath}`, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
    });
    return { status: response.status, text: await response.text() };
  }

  const stop = async () => {
    if (!exited) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  };

  // Caddy logs "serving initial configuration" once its config runs (or exits on a bad one).
  while (!log.includes('serving initial configuration')) {
    if (exited) {
      await stop();
      throw new Error(`caddy exited at start:\n${log}`);
    }
    await nextChunk();
  }
  return {
    admin,
    log: () => log,
    async logBarrier(marker) {
      await admin('GET', `/config/?barrier=${marker}`);
      while (!log.includes(marker)) {
        if (exited) throw new Error(`caddy exited:\n${log}`);
        await nextChunk();
      }
    },
    stop,
  };
}
