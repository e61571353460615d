import type { Schedule } from '@hostctl/api-client';
import { StatusBadge } from '../components/feedback.tsx';
import { dateTime, timeAgo } from '../format.ts';
import { commandText, runTime } from './job-format.ts';

/** What a row's controls do; absent for viewers (no control is shown). */
interface ScheduleControls {
  busy: boolean;
  onEdit: (schedule: Schedule) => void;
  onToggle: (schedule: Schedule) => void;
  onRunNow: (schedule: Schedule) => void;
  onDelete: (schedule: Schedule) => void;
}

interface SchedulesTableProps {
  schedules: readonly Schedule[];
  controls?: ScheduleControls | undefined;
  onShowRuns: (schedule: Schedule) => void;
}

/** The service's schedules: what runs when, whether it is on, and how its last time went. */
export function SchedulesTable({ schedules, controls, onShowRuns }: SchedulesTableProps) {
  return (
    <div className="table-scroll">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Command</th>
            <th scope="col">Schedule</th>
            <th scope="col">Next run</th>
            <th scope="col">Enabled</th>
            <th scope="col">Last run</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {schedules.map((schedule) => (
            <tr key={schedule.id}>
              <th scope="row">{schedule.name}</th>
              <td>
                <code>{commandText(schedule.command)}</code>
                {schedule.component ? <span className="muted"> in {schedule.component}</span> : null}
              </td>
              <td>
                <code>{schedule.cron}</code> <span className="muted">{schedule.time_zone}</span>
              </td>
              <td title={dateTime(schedule.next_run_at)}>
                {schedule.next_run_at ? timeAgo(schedule.next_run_at) : '—'}
              </td>
              <td>{schedule.enabled ? 'yes' : 'no (disabled)'}</td>
              <td>
                <LastRun run={schedule.last_run} />
              </td>
              <td className="row-actions">
                <button type="button" className="ghost" onClick={() => onShowRuns(schedule)}>
                  Runs<span className="visually-hidden"> of {schedule.name}</span>
                </button>
                {controls ? <RowControls schedule={schedule} controls={controls} /> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function RowControls({ schedule, controls }: { schedule: Schedule; controls: ScheduleControls }) {
  const name = <span className="visually-hidden"> {schedule.name}</span>;
  return (
    <>
      <button type="button" disabled={controls.busy} onClick={() => controls.onRunNow(schedule)}>
        Run now{name}
      </button>
      <button type="button" className="ghost" onClick={() => controls.onEdit(schedule)}>
        Edit{name}
      </button>
      <button
        type="button"
        className="ghost"
        disabled={controls.busy}
        onClick={() => controls.onToggle(schedule)}
      >
        {schedule.enabled ? 'Disable' : 'Enable'}
        {name}
      </button>
      <button type="button" className="ghost" onClick={() => controls.onDelete(schedule)}>
        Delete{name}
      </button>
    </>
  );
}

/**
 * The schedule's latest record, as an outcome with its exit code and when: the list answers it with
 * each schedule (one read for the table, not one per row).
 */
function LastRun({ run }: { run: Schedule['last_run'] }) {
  if (!run) return <span className="muted">never</span>;
  return (
    <span title={dateTime(runTime(run))}>
      <StatusBadge status={run.status} />
      {run.exit_code === null ? null : <span className="muted"> exit {run.exit_code}</span>}{' '}
      <span className="muted">{timeAgo(runTime(run))}</span>
    </span>
  );
}
