import type { ReactNode } from 'react';
import { toProblem, type QuotaRefusal } from '@hostctl/api-client';
import { quotaRefusalText } from '../quota-figures.ts';
import { Link } from '../router.tsx';
import { usagePath } from '../routes.ts';

/**
 * An API error where the action was taken: the problem's title and detail, announced. A
 * `quota_exceeded` refusal reads as the quota in words, its limit, the usage and what was asked
 * for, with a link to the customer's usage page (docs/quotas.md#in-the-dashboard).
 */
export function ProblemAlert({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const problem = toProblem(error);
  if (problem.code === 'quota_exceeded' && problem.quota)
    return <QuotaRefusalAlert refusal={problem.quota} />;
  return (
    <div role="alert" className="alert">
      <strong>{problem.title}</strong>
      {problem.detail ? <span> {problem.detail}</span> : null}
      {problem.errors.length > 0 ? (
        <ul>
          {problem.errors.map((field, index) => (
            <li key={index}>
              <code>{field.path}</code>: {field.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function QuotaRefusalAlert({ refusal }: { refusal: QuotaRefusal }) {
  const { title, sentence } = quotaRefusalText(refusal);
  return (
    <div role="alert" className="alert quota-refusal" data-quota={refusal.name}>
      <strong>{title}</strong>
      <span> {sentence}</span>
      {refusal.customerId ? (
        <>
          {' '}
          <Link to={usagePath(refusal.customerId)}>See usage and quotas</Link>
        </>
      ) : null}
    </div>
  );
}

interface ListStateProps {
  /** What the list holds, for the loading and empty messages ("services"). */
  noun: string;
  isPending: boolean;
  error: unknown;
  isEmpty: boolean;
  /** Shown instead of the default "No … yet." when the list is empty. */
  empty?: ReactNode;
  children: ReactNode;
}

/** Every list's three other states: loading (aria-busy), error (the problem) and empty. */
export function ListState({ noun, isPending, error, isEmpty, empty, children }: ListStateProps) {
  if (isPending) {
    return (
      <div aria-busy="true" aria-live="polite" className="muted state">
        Loading {noun}…
      </div>
    );
  }
  if (error) return <ProblemAlert error={error} />;
  if (isEmpty) return <div className="muted state">{empty ?? `No ${noun} yet.`}</div>;
  return <>{children}</>;
}

const STATUS_CLASS: Record<string, string> = {
  running: 'ok',
  active: 'ok',
  verified: 'busy',
  pending: 'idle',
  succeeded: 'ok',
  healthy: 'ok',
  deploying: 'busy',
  queued: 'busy',
  starting: 'busy',
  stopped: 'idle',
  cancelled: 'idle',
  superseded: 'idle',
  unknown: 'idle',
  failed: 'bad',
  unhealthy: 'bad',
  rolled_back: 'bad',
  // Runs of jobs (docs/jobs.md): a time that never ran is a failure to look at; a skipped one was asked for.
  timed_out: 'bad',
  missed: 'bad',
  skipped: 'idle',
};

/** A status as text with a colour cue (the word carries the meaning, never the colour alone). */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge ${STATUS_CLASS[status] ?? 'idle'}`}>{status.replace('_', ' ')}</span>;
}

interface PagerProps {
  page: number;
  perPage: number;
  /** Unknown while the list loads: nothing is shown. */
  total: number | undefined;
  onPage: (page: number) => void;
  label: string;
}

export function Pager({ page, perPage, total, onPage, label }: PagerProps) {
  if (total === undefined) return null;
  const pages = Math.max(1, Math.ceil(total / perPage));
  if (pages <= 1) return null;
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous
      </button>
      <span>
        Page {page} of {pages}
      </span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next
      </button>
    </nav>
  );
}
