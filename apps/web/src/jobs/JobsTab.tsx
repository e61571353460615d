import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { must, type Schedule, type Service } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ConfirmQuestion } from '../components/ConfirmQuestion.tsx';
import { ListState, ProblemAlert } from '../components/feedback.tsx';
import { refreshJobs, useSchedules, type RunsFilter } from './job-api.ts';
import { RunForm } from './RunForm.tsx';
import { RunOutput } from './RunOutput.tsx';
import { RunsHistory } from './RunsHistory.tsx';
import { ScheduleForm } from './ScheduleForm.tsx';
import { SchedulesTable } from './SchedulesTable.tsx';

/**
 * The service's scheduled jobs and runs (docs/jobs.md). Every jobs route needs `services:operate`,
 * reads included (a command and its output are an operator's business), so a viewer gets the
 * reason instead of a list the API would refuse.
 */
export function JobsTab({ service, canOperate }: { service: Service; canOperate: boolean }) {
  if (!canOperate)
    return (
      <section aria-labelledby="jobs-heading">
        <h2 id="jobs-heading">Jobs</h2>
        <p className="muted">
          Scheduled jobs, one-off runs and their output are shown to operators and admins only: a job&apos;s
          command and what it printed are an operator&apos;s business.
        </p>
      </section>
    );
  return <Jobs service={service} />;
}

type Editing = { kind: 'new' } | { kind: 'edit'; schedule: Schedule } | null;

function Jobs({ service }: { service: Service }) {
  const queries = useQueryClient();
  const schedules = useSchedules(service.id);
  const [editing, setEditing] = useState<Editing>(null);
  const [deleting, setDeleting] = useState<Schedule | null>(null);
  const [filter, setFilter] = useState<RunsFilter>({ kind: 'service' });
  const [shownRun, setShownRun] = useState<string | null>(null);
  const [startingRun, setStartingRun] = useState(false);
  // A run started here takes the focus when it shows, as the form it came from is gone.
  const [focusRun, setFocusRun] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const rows = schedules.data?.data ?? [];

  const change = useMutation({
    mutationFn: async (action: { kind: 'toggle' | 'run' | 'delete'; schedule: Schedule }) => {
      const path = { params: { path: { id: action.schedule.id } } };
      switch (action.kind) {
        case 'toggle':
          await must(
            api.PATCH('/api/schedules/{id}', { ...path, body: { enabled: !action.schedule.enabled } }),
          );
          return `${action.schedule.name} ${action.schedule.enabled ? 'disabled' : 'enabled'}.`;
        case 'run': {
          const run = await must(api.POST('/api/schedules/{id}/run-now', path));
          setFilter({ kind: 'schedule', schedule: action.schedule });
          setShownRun(run.id);
          return `Run ${run.id.slice(0, 8)} of ${action.schedule.name} ${run.status}.`;
        }
        case 'delete':
          await must(api.DELETE('/api/schedules/{id}', path));
          setDeleting(null);
          if (filter.kind === 'schedule' && filter.schedule.id === action.schedule.id)
            setFilter({ kind: 'service' });
          return `${action.schedule.name} deleted, with its run history.`;
      }
    },
    onMutate: () => setNotice(null),
    onSuccess: setNotice,
    onSettled: () => refreshJobs(queries, service.id),
  });
  const controls = {
    busy: change.isPending,
    onEdit: (schedule: Schedule) => setEditing({ kind: 'edit', schedule }),
    onToggle: (schedule: Schedule) => change.mutate({ kind: 'toggle', schedule }),
    onRunNow: (schedule: Schedule) => change.mutate({ kind: 'run', schedule }),
    onDelete: (schedule: Schedule) => setDeleting(schedule),
  };

  return (
    <>
      <section aria-labelledby="schedules-heading">
        <div className="page-heading">
          <h2 id="schedules-heading">Schedules</h2>
          <button type="button" className="primary" onClick={() => setEditing({ kind: 'new' })}>
            New schedule
          </button>
        </div>
        {editing ? (
          <ScheduleForm
            key={editing.kind === 'new' ? 'new' : editing.schedule.id}
            serviceId={service.id}
            schedule={editing.kind === 'edit' ? editing.schedule : undefined}
            onSaved={(saved, verb) => {
              setEditing(null);
              setNotice(`Schedule ${saved.name} ${verb}.`);
            }}
            onCancel={() => setEditing(null)}
          />
        ) : null}
        {deleting ? (
          <ConfirmQuestion
            label={`Confirm delete ${deleting.name}`}
            question={`Delete schedule ${deleting.name}? Its run history goes with it; a run in progress is stopped.`}
            confirm="Delete schedule"
            busy={change.isPending}
            onConfirm={() => change.mutate({ kind: 'delete', schedule: deleting })}
            onCancel={() => setDeleting(null)}
          />
        ) : null}
        <div role="status" aria-live="polite">
          {notice ? <p className="notice">{notice}</p> : null}
        </div>
        <ProblemAlert error={change.error} />
        <ListState
          noun="schedules"
          isPending={schedules.isPending}
          error={schedules.error}
          isEmpty={rows.length === 0}
          empty="No schedules yet."
        >
          <SchedulesTable
            schedules={rows}
            controls={controls}
            onShowRuns={(schedule) => setFilter({ kind: 'schedule', schedule })}
          />
        </ListState>
      </section>
      <section aria-labelledby="runs-heading">
        <div className="page-heading">
          <h2 id="runs-heading">
            {filter.kind === 'service' ? 'Runs of the service' : `Runs of ${filter.schedule.name}`}
          </h2>
          <div className="form-row">
            {filter.kind === 'schedule' ? (
              <button type="button" onClick={() => setFilter({ kind: 'service' })}>
                Show all runs
              </button>
            ) : null}
            <button type="button" className="primary" onClick={() => setStartingRun(true)}>
              Run a command
            </button>
          </div>
        </div>
        {startingRun ? (
          <RunForm
            serviceId={service.id}
            onStarted={(run) => {
              setStartingRun(false);
              setFilter({ kind: 'service' });
              setFocusRun(true);
              setShownRun(run.id);
            }}
            onCancel={() => setStartingRun(false)}
          />
        ) : null}
        {filter.kind === 'service' ? (
          <p className="muted">
            One-off runs (started here or with hostctl run) and every schedule&apos;s runs, newest first.
          </p>
        ) : null}
        {shownRun ? (
          <RunOutput
            key={shownRun}
            serviceId={service.id}
            runId={shownRun}
            takeFocus={focusRun}
            onClose={() => {
              setShownRun(null);
              setFocusRun(false);
            }}
          />
        ) : null}
        <RunsHistory
          key={filter.kind === 'service' ? 'service' : filter.schedule.id}
          serviceId={service.id}
          filter={filter}
          schedules={rows}
          shownRun={shownRun}
          onShow={(id) => {
            setFocusRun(false);
            setShownRun(id);
          }}
        />
      </section>
    </>
  );
}
