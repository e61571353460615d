import { spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import { ROOT } from './fault-env.js';

/**
 * Restarts the Docker engine the way scripts/lib/docker.sh runs it: SIGTERM to the daemon (by the
 * pid it wrote itself, never by name), then the same command line again in its own session,
 * logging to .data/logs/dockerd.log. The engine runs with live-restore (scripts/lib/docker.sh), so
 * containers outlive the daemon; the processes in `killWhileDown` (containers without a restart
 * policy) are killed while it is down, as a host crash would. That is the outage the reconciler
 * must repair. Only with FAULT_RESTART_DOCKER=1.
 */
const PID_FILE = '/var/run/docker.pid';

export async function restartDockerEngine(
  docker: Docker,
  killWhileDown: number[] = [],
): Promise<{ downMs: number }> {
  const pid = Number(readFileSync(PID_FILE, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`no dockerd pid in ${PID_FILE}`);
  const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  if (path.basename(command[0] ?? '') !== 'dockerd') throw new Error(`pid ${pid} is not dockerd`);
  const started = Date.now();
  process.kill(pid, 'SIGTERM');
  for (let deadline = Date.now() + 60_000; existsSync(`/proc/${pid}`); await sleep(100)) {
    if (Date.now() > deadline) throw new Error(`dockerd (pid ${pid}) did not stop within 60 s`);
  }
  for (const victim of killWhileDown) {
    try {
      process.kill(victim, 'SIGKILL');
    } catch {
      // already gone: as good as killed
    }
  }
  const log = openSync(path.join(ROOT, '.data/logs/dockerd.log'), 'a');
  const child = spawn(command[0]!, command.slice(1), { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  // Keep scripts/stop-services.sh able to stop it, but only when this checkout owned the daemon.
  const pidFile = path.join(ROOT, '.data/run/dockerd.pid');
  if (existsSync(pidFile) && child.pid) writeFileSync(pidFile, `${child.pid} ${startTime(child.pid)}\n`);
  for (let deadline = Date.now() + 90_000; ; await sleep(250)) {
    try {
      await docker.ping();
      return { downMs: Date.now() - started };
    } catch {
      if (Date.now() > deadline) throw new Error('dockerd did not answer within 90 s of its restart');
    }
  }
}

/** Field 22 of /proc/PID/stat, as scripts/lib/common.sh records it against pid reuse. */
function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}
