import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

export interface LoadResult {
  /** Completed requests per second over the measured run. */
  rps: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  /** Requests that did not get a 2xx, plus socket errors and timeouts: a valid run has 0. */
  failures: number;
  statuses: string;
  /**
   * CPU time (user + system) the server process spent per completed request during the measured
   * run, when its pid was given: less sensitive than req/s to other work on the machine.
   */
  cpuMsPerRequest: number | null;
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationS: number;
  headers?: Record<string, string>;
  /** TLS server name (SNI) when the url is https:// to an address, not to the name itself. */
  servername?: string;
  /** The server's pid, to measure its CPU time per request. */
  pid?: number;
}

/**
 * One autocannon run after a 1 s warm-up (JIT, connection pools, caches), in this process. The
 * servers under test are other processes, so the load generator never shares their event loop.
 */
export async function measure(options: LoadOptions): Promise<LoadResult> {
  const base = {
    url: options.url,
    connections: options.connections,
    headers: options.headers ?? {},
    timeout: 10,
    ...(options.servername ? { servername: options.servername } : {}),
  };
  await autocannon({ ...base, duration: 1 });
  const cpuBefore = options.pid === undefined ? 0 : cpuMs(options.pid);
  const result = await autocannon({ ...base, duration: options.durationS });
  const cpuSpent = options.pid === undefined ? null : cpuMs(options.pid) - cpuBefore;
  const failures = result.non2xx + result.errors + result.timeouts;
  const statuses = Object.entries(result.statusCodeStats)
    .map(([code, stat]) => `${code}×${stat.count}`)
    .join(' ');
  if (result.latency.totalCount === 0) {
    throw new Error(
      `${options.url}: no request completed within ${options.durationS} s (${options.connections} connections)`,
    );
  }
  if (failures > 0) {
    throw new Error(
      `${options.url}: ${failures} failed requests (${statuses}, errors ${result.errors}, timeouts ${result.timeouts})`,
    );
  }
  return {
    rps: result.latency.totalCount / result.duration,
    meanMs: result.latency.mean,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    failures,
    statuses,
    cpuMsPerRequest:
      cpuSpent === null || result.latency.totalCount === 0 ? null : cpuSpent / result.latency.totalCount,
  };
}

/** utime + stime of a process in ms (/proc/<pid>/stat fields 14 and 15, in clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Latency of single requests, one after another on one keep-alive connection: median and p90 in
 * ms with sub-millisecond precision. Less sensitive to other load on the machine than a
 * throughput run, so it is what "latency stays flat" is judged on.
 */
export async function sequentialLatency(
  url: string,
  headers: Record<string, string>,
  count = 200,
): Promise<{ medianMs: number; p90Ms: number }> {
  const once = async () => {
    const t0 = performance.now();
    const response = await fetch(url, { headers });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    return performance.now() - t0;
  };
  for (let i = 0; i < 20; i++) await once();
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push(await once());
  times.sort((a, b) => a - b);
  return { medianMs: median(times), p90Ms: times[Math.floor(times.length * 0.9)]! };
}

/** Field-wise median of several runs of the same measurement (rounds interleaved with the baseline). */
export function medianResult(results: LoadResult[]): LoadResult {
  const pick = (f: (r: LoadResult) => number) => median(results.map(f));
  const cpu = results.map((r) => r.cpuMsPerRequest).filter((v): v is number => v !== null);
  return {
    rps: pick((r) => r.rps),
    meanMs: pick((r) => r.meanMs),
    p50Ms: pick((r) => r.p50Ms),
    p99Ms: pick((r) => r.p99Ms),
    failures: results.reduce((sum, r) => sum + r.failures, 0),
    statuses: results.map((r) => r.statuses).join(' | '),
    cpuMsPerRequest: cpu.length > 0 ? median(cpu) : null,
  };
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
