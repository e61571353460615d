import type { JobRunSummary } from '@hostctl/api-client';

// How jobs read in the dashboard: a command as one line, a run's trigger and duration. Pure, so
// the unit tests need no browser.

/** An argv as one line, each argument quoted when a reader could not tell where it ends. */
export function commandText(command: readonly string[]): string {
  return command.map((arg) => (arg === '' || /[\s"'\\]/.test(arg) ? JSON.stringify(arg) : arg)).join(' ');
}

/**
 * The form's command box holds one argument per line, so nothing is split by a shell's rules the
 * API does not apply (docs/jobs.md: an argv, no shell unless written). Blank lines are ignored.
 */
export function commandFromLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/\r$/, ''))
    .filter((line) => line !== '');
}

export function commandToLines(command: readonly string[]): string {
  return command.join('\n');
}

/** What started a run: a schedule's time (and which retry), a "Run now", or a one-off run. */
export function runTrigger(
  run: Pick<JobRunSummary, 'schedule_id' | 'scheduled_for' | 'attempt'>,
  scheduleName?: string,
): string {
  if (run.schedule_id === null) return 'one-off run';
  const schedule = scheduleName ? `schedule ${scheduleName}` : 'schedule';
  if (run.scheduled_for === null) return `run now (${schedule})`;
  return run.attempt > 1 ? `${schedule}, retry ${run.attempt - 1}` : schedule;
}

/** 812 ms, 3.2 s, 2 min 5 s; a run that did not run has no duration. */
export function duration(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** A run is final once it left queued and running (missed and skipped ones never ran). */
export function isFinalRun(status: string): boolean {
  return status !== 'queued' && status !== 'running';
}

/** When a run stands for: its start, else the time it was scheduled for, else when it was recorded. */
export function runTime(run: Pick<JobRunSummary, 'started_at' | 'scheduled_for' | 'created_at'>): string {
  return run.started_at ?? run.scheduled_for ?? run.created_at;
}
