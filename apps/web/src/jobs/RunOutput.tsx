import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { ProblemAlert, StatusBadge } from '../components/feedback.tsx';
import { dateTime } from '../format.ts';
import { refreshJobLists, useRun } from './job-api.ts';
import { commandText, duration, isFinalRun } from './job-format.ts';

/**
 * One run with its log: status (announced as it changes), exit code, duration, error and the
 * output the API kept (its last 256 KiB). Read again every 2 s until the run is final.
 */
export function RunOutput({
  serviceId,
  runId,
  takeFocus = false,
  onClose,
}: {
  serviceId: string;
  runId: string;
  /** Move the focus to the panel when it shows (a run just started from a form that closed). */
  takeFocus?: boolean;
  onClose: () => void;
}) {
  const panel = useRef<HTMLElement>(null);
  useEffect(() => {
    if (takeFocus) panel.current?.focus();
  }, [takeFocus]);
  const run = useRun(serviceId, runId);
  const short = runId.slice(0, 8);
  const data = run.data;
  const queries = useQueryClient();
  const ended = data !== undefined && isFinalRun(data.status);
  // The lists show the run's outcome as soon as this panel sees it, not at their next poll.
  useEffect(() => {
    if (ended) void refreshJobLists(queries, serviceId);
  }, [ended, queries, serviceId]);
  return (
    <section className="card run-output" aria-labelledby="run-output-heading" ref={panel} tabIndex={-1}>
      <div className="page-heading">
        <h3 id="run-output-heading">Run {short}</h3>
        <span role="status" aria-live="polite">
          {data ? (
            <>
              <StatusBadge status={data.status} />
              {data.exit_code === null ? null : <span className="muted"> exit code {data.exit_code}</span>}
            </>
          ) : null}
        </span>
        <button type="button" onClick={onClose}>
          Close run {short}
        </button>
      </div>
      {run.isPending ? (
        <div aria-busy="true" className="muted state">
          Loading run…
        </div>
      ) : null}
      <ProblemAlert error={run.error} />
      {data ? (
        <>
          <dl className="facts">
            <dt>Command</dt>
            <dd>
              <code>{commandText(data.command)}</code>
            </dd>
            <dt>Component</dt>
            <dd>{data.component ?? 'the web component'}</dd>
            <dt>Started</dt>
            <dd>{dateTime(data.started_at)}</dd>
            <dt>Duration</dt>
            <dd>{duration(data.duration_ms)}</dd>
          </dl>
          {data.error ? (
            <ProblemAlert error={{ title: `Run ${data.status.replace('_', ' ')}`, detail: data.error }} />
          ) : null}
          {data.output_truncated ? (
            <p className="muted">The output was longer than what is kept: only its end is shown.</p>
          ) : null}
          {data.output === '' ? (
            <p className="muted">
              {isFinalRun(data.status) ? 'No output.' : 'The output shows once the run ends.'}
            </p>
          ) : (
            // Focusable so a keyboard can scroll it; named so a screen reader says what it is.
            <pre className="run-log" tabIndex={0} role="log" aria-label={`Output of run ${short}`}>
              {data.output}
            </pre>
          )}
        </>
      ) : null}
    </section>
  );
}
