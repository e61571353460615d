import { useQueryClient } from '@tanstack/react-query';
import type { JobRun } from '@hostctl/api-client';
import { useEffect, useRef, useState } from 'react';
import { ProblemAlert, StatusBadge } from '../components/feedback.tsx';
import { dateTime } from '../format.ts';
import { LogView } from '../logs/LogView.tsx';
import { refreshJobLists, refreshRun, useRun } from './job-api.ts';
import { commandText, duration, isFinalRun } from './job-format.ts';
import { useRunFollow } from './use-run-follow.ts';

/**
 * One run with its log: status (announced as it changes), exit code, duration and error. A run
 * that is queued or running when the panel opens has its output followed live, line by line,
 * until its end (docs/jobs.md#following-a-run); a finished one shows the output the API kept (its
 * last 256 KiB), and so does a run whose live stream failed, once it is final.
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
  // Decided once, from the first read: a run followed live stays in the live view after its end.
  const [live, setLive] = useState<boolean>();
  useEffect(() => {
    if (data) setLive((current) => current ?? !isFinalRun(data.status));
  }, [data]);
  const follow = useRunFollow(runId, live === true, () => void refreshRun(queries, serviceId, runId));
  // The end message is the outcome before the run's next read shows it.
  const status = follow.end?.status ?? data?.status;
  const exitCode = follow.end ? follow.end.exitCode : data?.exit_code;
  // The lists show the run's outcome as soon as this panel sees it, not at their next poll.
  useEffect(() => {
    if (ended) void refreshJobLists(queries, serviceId);
  }, [ended, queries, serviceId]);
  return (
    <section className="card run-output" aria-labelledby="run-output-heading" ref={panel} tabIndex={-1}>
      <div className="page-heading">
        <h3 id="run-output-heading">Run {short}</h3>
        <span role="status" aria-live="polite">
          {status ? (
            <>
              <StatusBadge status={status} />
              {exitCode == null ? null : <span className="muted"> exit code {exitCode}</span>}
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
          <ProblemAlert error={follow.problem} />
          {live && !follow.problem ? (
            <LogView
              buffer={follow.buffer}
              version={follow.version}
              follow
              label={`Output of run ${short}`}
              empty={follow.end ? 'No output.' : 'Waiting for output…'}
            />
          ) : (
            <StoredOutput run={data} label={`Output of run ${short}`} />
          )}
        </>
      ) : null}
    </section>
  );
}

/** The output the API kept for a run: its last 256 KiB, masked. */
function StoredOutput({ run, label }: { run: JobRun; label: string }) {
  return (
    <>
      {run.output_truncated ? (
        <p className="muted">The output was longer than what is kept: only its end is shown.</p>
      ) : null}
      {run.output === '' ? (
        <p className="muted">
          {isFinalRun(run.status) ? 'No output.' : 'The output shows once the run ends.'}
        </p>
      ) : (
        // Focusable so a keyboard can scroll it; named so a screen reader says what it is.
        <pre className="run-log" tabIndex={0} role="log" aria-label={label}>
          {run.output}
        </pre>
      )}
    </>
  );
}
