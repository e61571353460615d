import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Db } from '@hostctl/db';
import { LOG_DIR } from './fault-env.js';
import type { FaultStack } from './fault-stack.js';
import { labelValues, scrape, sumMetric } from './metrics-scrape.js';
import type { Ledger } from './request-ledger.js';

/**
 * What the run did and found, printed as it goes ([fault] lines) and summarised at the end.
 * Failed checks are collected rather than thrown, so one broken invariant never hides the others
 * or the figures a person needs to understand it.
 */
export function createFaultReport() {
  const failures: string[] = [];
  const started = Date.now();
  const print = (line: string) => console.log(`[fault] ${line}`);
  return {
    failures,
    note: print,
    fail(what: string): void {
      failures.push(what);
      print(`FAILED: ${what}`);
    },
    check(isOk: boolean, what: string): void {
      if (!isOk) this.fail(what);
    },
    async phase(name: string, run: () => Promise<void>): Promise<void> {
      const at = Date.now();
      print(`--- ${name}`);
      try {
        await run();
      } catch (error) {
        this.fail(`${name}: ${(error as Error).message}`);
      }
      print(`--- ${name}: ${((Date.now() - at) / 1000).toFixed(1)} s`);
    },
    async summary(run: { stack: FaultStack; db: Db; ledger: Ledger }): Promise<void> {
      const { stack, db, ledger } = run;
      const count = (kind: string) => ledger.accepted.filter((request) => request.kind === kind).length;
      const deploymentIds = ledger.accepted.flatMap((request) =>
        request.deploymentId ? [request.deploymentId] : [],
      );
      const outcomes = await db.deployment.groupBy({
        by: ['status'],
        where: { id: { in: [...new Set(deploymentIds)] } },
        _count: true,
      });
      print(
        `requests accepted: ${ledger.accepted.length} (creates ${count('create')}, redeploys ${count('redeploy')}, deletes ${count('delete')}); refused: ${ledger.refused.length} (${ledger.refused.map((r) => `${r.what} ${r.status}`).join(', ') || 'none'})`,
      );
      print(`deployment outcomes: ${outcomes.map((row) => `${row.status} ${row._count}`).join(', ')}`);
      const workerTexts = await scrape(stack.workers.map((worker) => worker.url));
      const apiTexts = await scrape(stack.apis.map((api) => api.url));
      print(
        `worker metrics (live processes): stalled jobs ${sumMetric(workerTexts, 'hostctl_jobs_stalled_total')}`,
      );
      print(`  jobs by outcome ${JSON.stringify(labelValues(workerTexts, 'hostctl_jobs_total', 'outcome'))}`);
      print(
        `  reconciler repairs ${JSON.stringify(labelValues(workerTexts, 'hostctl_reconciler_repairs_total', 'kind'))}`,
      );
      print(
        `  lock contention ${JSON.stringify(labelValues(workerTexts, 'hostctl_lock_contended_total', 'scope'))}`,
      );
      print(
        `api metrics: ${sumMetric(apiTexts, 'hostctl_http_request_duration_seconds_count')} requests timed`,
      );
      this.check(
        workerTexts.every((text) => text.includes('hostctl_queue_jobs{')),
        'a worker /metrics lacks the queue depth gauge',
      );
      this.check(
        apiTexts.every((text) => text.includes('hostctl_http_request_duration_seconds_bucket{')),
        'an api /metrics lacks the request latency histogram',
      );
      // A SIGKILL leaves no trace; an uncaught error in a process prints Node's version line.
      const crashes = stack.apis
        .concat(stack.workers)
        .filter((item) =>
          readFileSync(path.join(LOG_DIR, `${item.name}.log`), 'utf8').includes('\nNode.js v'),
        );
      this.check(
        crashes.length === 0,
        `processes crashed by themselves: ${crashes.map((item) => item.name).join(', ')}`,
      );
      print(`total ${((Date.now() - started) / 1000).toFixed(0)} s; ${failures.length} failed check(s)`);
      for (const failure of failures) print(`  - ${failure}`);
    },
  };
}

export type FaultReport = ReturnType<typeof createFaultReport>;
