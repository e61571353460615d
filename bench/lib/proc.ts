import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from './config.js';

/**
 * Child processes of the bench: the API, workers and baseline servers each run in their own Node
 * process (`node --import tsx <entry>`, what `tsx <entry>` does minus its wrapper process, so the
 * pid is the server's own and its RSS can be read), never in the process that drives the load.
 * With BENCH_RUNTIME=bundle the API and workers run from the production esbuild bundles instead.
 */
export interface Proc {
  name: string;
  pid: number;
  child: ChildProcess;
  /** The last lines the process wrote, for error messages. */
  tail(): string;
  stop(): Promise<void>;
}

const running = new Set<Proc>();

/**
 * Every process's whole output, kept for the run under .data/bench/logs-<start time>/<name>.log: a
 * suite that fails (a 500 from the API, a worker that died) is explained by these files, where the
 * last lines kept in memory had often scrolled past the cause.
 */
export const LOG_DIR = path.join(
  ROOT,
  '.data',
  'bench',
  `logs-${new Date().toISOString().replace(/[:.]/g, '-')}`,
);
const logFiles: { name: string; file: string }[] = [];

function logFileFor(name: string): string {
  mkdirSync(LOG_DIR, { recursive: true });
  const base = name.replace(/[^\w.-]+/g, '-');
  const taken = logFiles.filter((entry) => path.basename(entry.file).startsWith(base)).length;
  const file = path.join(LOG_DIR, `${base}${taken > 0 ? `-${taken + 1}` : ''}.log`);
  logFiles.push({ name, file });
  return file;
}

/**
 * Only what a Node process needs from the caller's environment: a shell that sourced .data/env
 * must not leak DATABASE_URL, CADDY_ADMIN_URL or DNS settings of the dev stack into bench processes.
 */
function baseEnv(): Record<string, string> {
  const keep = ['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME'];
  const env: Record<string, string> = {};
  for (const key of keep) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

export function startNode(
  name: string,
  entry: string,
  env: Record<string, string>,
  options: { cwd?: string; nodeArgs?: string[] } = {},
): Proc {
  return startProcess(
    name,
    process.execPath,
    [...(options.nodeArgs ?? ['--import', 'tsx']), entry],
    env,
    options.cwd,
  );
}

/** Any executable (e.g. the release suite's own Caddy), stopped with the rest by stopAll(). */
export function startProcess(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd = ROOT,
): Proc {
  const child = spawn(command, args, {
    cwd,
    env: { ...baseEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`${name} did not start`);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    if (lines.length > 60) lines.splice(0, lines.length - 60);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const logFile = createWriteStream(logFileFor(name));
  child.stdout?.pipe(logFile, { end: false });
  child.stderr?.pipe(logFile, { end: false });
  child.once('close', () => logFile.end());
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const proc: Proc = {
    name,
    pid: child.pid,
    child,
    tail: () => lines.join('\n'),
    async stop() {
      running.delete(proc);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  running.add(proc);
  return proc;
}

/** Stops every process the bench started (on success, failure or Ctrl-C). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((proc) => proc.stop()));
}

/**
 * The error lines of every process the bench started (pino level >= 50, or a line naming an error),
 * the last `perProcess` of each: what `pnpm bench` prints when a suite fails.
 */
export function errorLines(perProcess = 20): string[] {
  const out: string[] = [];
  for (const { name, file } of logFiles) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const errors = text.split('\n').filter(isErrorLine).slice(-perProcess);
    if (errors.length > 0)
      out.push(`${name} (${path.relative(ROOT, file)}):`, ...errors.map((line) => `  ${line}`));
  }
  return out;
}

function isErrorLine(line: string): boolean {
  if (line.startsWith('{')) {
    try {
      return ((JSON.parse(line) as { level?: number }).level ?? 0) >= 50;
    } catch {
      // not JSON after all: judged as text
    }
  }
  return /\b(error|exception|fatal)\b/i.test(line);
}

/** Polls `url` until it answers 200; fails early with the process's output when it exits. */
export async function waitHttp(proc: Proc, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.child.exitCode !== null)
      throw new Error(`${proc.name} exited (${proc.child.exitCode}):\n${proc.tail()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`${proc.name} did not answer ${url} within ${timeoutMs} ms:\n${proc.tail()}`);
    await sleep(200);
  }
}

/** Resident set size of a process in MiB, from /proc/<pid>/status (VmRSS). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!match?.[1]) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) / 1024;
}

/** Samples the RSS of processes while `work` runs; returns the peak of each (MiB). */
export async function peakRss<T>(
  pids: number[],
  work: () => Promise<T>,
): Promise<{ result: T; peaks: number[] }> {
  const peaks = pids.map((pid) => rssMiB(pid));
  const timer = setInterval(() => {
    pids.forEach((pid, i) => {
      try {
        peaks[i] = Math.max(peaks[i] ?? 0, rssMiB(pid));
      } catch {
        // exited
      }
    });
  }, 250);
  try {
    const result = await work();
    return { result, peaks };
  } finally {
    clearInterval(timer);
  }
}

/** Runs a command to completion (used for `pnpm -s db:migrate`). */
export function run(command: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...baseEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve(output)
        : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${output}`)),
    );
  });
}

/** 1-minute load average and the number of CPUs: other work on the machine skews every figure. */
export function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}
