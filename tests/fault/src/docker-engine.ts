import { execFile, spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { ROOT } from './fault-env.js';

/**
 * Restarts a Docker engine the way scripts/lib/docker.sh (and swarm-engine.sh) runs it: SIGTERM to
 * the daemon (by the pid it wrote itself, never by name), then the same command line again in its
 * own session, appending to its log in .data/logs. The dev engine runs with live-restore, so
 * containers outlive the daemon; the processes in `killWhileDown` (containers without a restart
 * policy) are killed while it is down, as a host crash would. That is the outage the reconciler
 * must repair. The swarm engine cannot have live-restore: its containers stop with it, and Swarm
 * and the reconciler bring them back. Only with FAULT_RESTART_DOCKER=1.
 */
export interface EngineProcess {
  /** The pid file the daemon writes (its daemon.json's `pidfile`). */
  pidFile: string;
  /** The name scripts/lib/common.sh's start_bg gave it: .data/logs/<name>.log, .data/run/<name>.pid. */
  name: string;
  /** What its service manager runs before starting it again (scripts/lib/swarm-engine.sh does the same). */
  beforeStart?: () => Promise<void>;
}

const run = promisify(execFile);

/**
 * A swarm engine stopped without tearing its overlay sandboxes down leaves their vxlan links
 * (`vx-<vni>-<network>`) in the host namespace, and every task joining that network again then
 * fails with "error creating vxlan interface: file exists" (moby/libnetwork#1765). Outside a
 * running engine's sandboxes such a link is always stale; docs/multi-host.md gives operators the
 * same step for their service manager.
 */
async function removeStaleVxlanLinks(): Promise<void> {
  const { stdout } = await run('ip', ['-o', 'link', 'show', 'type', 'vxlan']);
  for (const name of stdout.split('\n').map((line) => /^\d+: (vx-[^:@\s]+)/.exec(line)?.[1]))
    if (name) await run('ip', ['link', 'delete', name]).catch(() => undefined);
}

export const DEV_ENGINE: EngineProcess = { pidFile: '/var/run/docker.pid', name: 'dockerd' };
export const SWARM_ENGINE: EngineProcess = {
  pidFile: '/var/lib/hostctl-swarm/dockerd.pid',
  name: 'swarm-dockerd',
  beforeStart: removeStaleVxlanLinks,
};

export async function restartDockerEngine(
  docker: Docker,
  engine: EngineProcess,
  killWhileDown: number[] = [],
): Promise<{ downMs: number }> {
  const pid = Number(readFileSync(engine.pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`no dockerd pid in ${engine.pidFile}`);
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
  await engine.beforeStart?.();
  const log = openSync(path.join(ROOT, `.data/logs/${engine.name}.log`), 'a');
  const child = spawn(command[0]!, command.slice(1), { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  // Keep scripts/stop-services.sh able to stop it, but only when this checkout owned the daemon.
  const pidFile = path.join(ROOT, `.data/run/${engine.name}.pid`);
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
