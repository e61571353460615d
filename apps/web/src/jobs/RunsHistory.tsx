import { useState } from 'react';
import type { Schedule } from '@hostctl/api-client';
import { ListState, Pager, StatusBadge } from '../components/feedback.tsx';
import { dateTime, timeAgo } from '../format.ts';
import { RUNS_PER_PAGE, useRuns, type RunsFilter } from './job-api.ts';
import { duration, runTime, runTrigger } from './job-format.ts';

interface RunsHistoryProps {
  serviceId: string;
  filter: RunsFilter;
  /** The service's schedules, to name the schedule of each run in the service-wide list. */
  schedules: readonly Schedule[];
  shownRun: string | null;
  onShow: (runId: string) => void;
}

/** Runs newest first, 20 a page: when, what started it, outcome, exit code, duration; each with its log. */
export function RunsHistory({ serviceId, filter, schedules, shownRun, onShow }: RunsHistoryProps) {
  const [page, setPage] = useState(1);
  const list = useRuns(serviceId, filter, page);
  const names = new Map(schedules.map((schedule) => [schedule.id, schedule.name]));
  const rows = list.data?.data ?? [];
  return (
    <>
      <ListState
        noun="runs"
        isPending={list.isPending}
        error={list.error}
        isEmpty={rows.length === 0}
        empty={filter.kind === 'schedule' ? `${filter.schedule.name} has not run yet.` : 'No runs yet.'}
      >
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Trigger</th>
                <th scope="col">Outcome</th>
                <th scope="col">Exit code</th>
                <th scope="col">Duration</th>
                <th scope="col">Error</th>
                <th scope="col">
                  <span className="visually-hidden">Log</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((run) => (
                <tr key={run.id} aria-current={run.id === shownRun ? 'true' : undefined}>
                  <td title={dateTime(runTime(run))}>{timeAgo(runTime(run))}</td>
                  <td>{runTrigger(run, run.schedule_id ? names.get(run.schedule_id) : undefined)}</td>
                  <td>
                    <StatusBadge status={run.status} />
                  </td>
                  <td>{run.exit_code ?? '—'}</td>
                  <td>{duration(run.duration_ms)}</td>
                  <td>{run.error ?? ''}</td>
                  <td>
                    <button type="button" className="ghost" onClick={() => onShow(run.id)}>
                      Show log<span className="visually-hidden"> of run {run.id.slice(0, 8)}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </ListState>
      <Pager
        label="Run pages"
        page={page}
        perPage={RUNS_PER_PAGE}
        total={list.data?.total}
        onPage={setPage}
      />
    </>
  );
}
