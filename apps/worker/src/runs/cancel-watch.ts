import { isFinalRun, type RunsStore } from '@hostctl/db';

const WATCH_MS = 1000;

/**
 * Aborts while a run's row turns final under it: a schedule's overlap policy `replace` records the
 * earlier run `cancelled` in PostgreSQL (docs/jobs.md#overlap), and the worker running it stops its
 * container at the next look. The database, not a message, is the signal, so it reaches whichever
 * worker runs the command.
 */
export function watchForCancellation(runs: Pick<RunsStore, 'findById'>, runId: string) {
  const controller = new AbortController();
  const timer = setInterval(() => {
    runs
      .findById(runId)
      .then((row) => {
        if (!row || isFinalRun(row.status)) controller.abort();
      })
      .catch(() => undefined);
  }, WATCH_MS);
  timer.unref();
  return { signal: controller.signal, stop: () => clearInterval(timer) };
}
