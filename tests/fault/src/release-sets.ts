import http from 'node:http';
import { setsOf, type Workloads } from './workloads.js';

/**
 * Continuous observation of one service during cutovers under kills: its container sets (one per
 * deployment label) from the runtime, and, when Caddy routes it, what a visitor gets. Issue 14's fault
 * promise: never more than two sets, never zero running sets while a healthy release exists.
 */
export interface SetWatch {
  samples: number;
  maxSets: number;
  /** Samples in which no set had all its containers running. */
  zeroRunning: number;
  violations: string[];
}

export function watchServiceSets(workloads: Workloads, serviceId: string, everyMs = 100) {
  const watch: SetWatch = { samples: 0, maxSets: 0, zeroRunning: 0, violations: [] };
  let isStopped = false;
  const loop = (async () => {
    while (!isStopped) {
      try {
        const found = setsOf(await workloads.units({ serviceId }));
        const sets = new Map(
          [...found].map(([deployment, units]) => [deployment, units.map((u) => u.state)]),
        );
        const running = [...sets.values()].filter((states) => states.every((state) => state === 'running'));
        watch.samples += 1;
        watch.maxSets = Math.max(watch.maxSets, sets.size);
        const describe = () =>
          [...sets].map(([deployment, states]) => `${deployment.slice(0, 8)}:${states.join('/')}`).join(' ');
        if (sets.size > 2 && watch.violations.length < 10)
          watch.violations.push(`${sets.size} sets at once: ${describe()}`);
        if (running.length === 0) {
          watch.zeroRunning += 1;
          if (watch.violations.length < 10) watch.violations.push(`no running set: ${describe() || 'none'}`);
        }
      } catch {
        // The engine did not answer: nothing to sample.
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    watch,
    async stop(): Promise<SetWatch> {
      isStopped = true;
      await loop;
      return watch;
    },
  };
}

/** One request through Caddy (127.0.0.1:80) with the service's host, on a connection of its own: 2xx? */
export function visit(host: string): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    // Whichever comes first; a response cut short ends with `close` and no `end`.
    const request = http.get(
      { host: '127.0.0.1', port: 80, path: '/', headers: { host }, timeout: 5000, agent: false },
      (response) => {
        response.resume();
        response.on('end', () => resolve((response.statusCode ?? 0) < 300));
        response.on('error', () => resolve(false));
        response.on('close', () => resolve(response.complete && (response.statusCode ?? 0) < 300));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve(false));
  });
}

/** Requests through Caddy, one after another, until stopped. */
export function visitorTraffic(host: string) {
  const counts = { ok: 0, failed: 0 };
  let isStopped = false;
  const loop = (async () => {
    while (!isStopped) {
      if (await visit(host)) counts.ok += 1;
      else counts.failed += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      isStopped = true;
      await loop;
      return counts;
    },
  };
}
