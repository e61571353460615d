import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { must } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ConfirmQuestion } from '../components/ConfirmQuestion.tsx';
import { ProblemAlert } from '../components/feedback.tsx';
import { dateTime, timeAgo } from '../format.ts';
import { refreshBackups, showBackupSchedule, useBackupSchedule } from './backup-api.ts';
import { retentionText } from './backup-format.ts';
import { BackupScheduleForm } from './BackupScheduleForm.tsx';

/**
 * The service's backup schedule (docs/backups.md#schedules): cron, time zone, on or off, next
 * time and retention, shown to everyone who reads the service; set, edited and removed by the
 * roles that may operate it.
 */
export function BackupScheduleSection({ serviceId, canChange }: { serviceId: string; canChange: boolean }) {
  const queries = useQueryClient();
  const schedule = useBackupSchedule(serviceId);
  const [editing, setEditing] = useState(false);
  const [removing, setRemoving] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const remove = useMutation({
    mutationFn: () =>
      must(api.DELETE('/api/services/{id}/backup-schedule', { params: { path: { id: serviceId } } })),
    onMutate: () => setNotice(null),
    onSuccess: () => {
      showBackupSchedule(queries, serviceId, null);
      setRemoving(false);
      setNotice('Backup schedule removed; the backups stay.');
    },
    onSettled: () => refreshBackups(queries, serviceId),
  });
  const current = schedule.data ?? null;

  return (
    <section aria-labelledby="backup-schedule-section-heading">
      <div className="page-heading">
        <h2 id="backup-schedule-section-heading">Backup schedule</h2>
        {canChange && !editing && !schedule.isPending ? (
          <button
            type="button"
            onClick={() => {
              setNotice(null);
              setEditing(true);
            }}
          >
            {current ? 'Edit schedule' : 'Set a schedule'}
          </button>
        ) : null}
      </div>
      <div role="status" aria-live="polite">
        {notice ? <p className="notice">{notice}</p> : null}
      </div>
      {schedule.isPending ? (
        <div aria-busy="true" className="muted state">
          Loading the backup schedule…
        </div>
      ) : schedule.error ? (
        <ProblemAlert error={schedule.error} />
      ) : current ? (
        <dl className="facts">
          <dt>When</dt>
          <dd>
            <code>{current.cron}</code> in {current.time_zone}
          </dd>
          <dt>State</dt>
          <dd>{current.enabled ? 'On' : 'Off: no scheduled backup is taken'}</dd>
          <dt>Next backup</dt>
          <dd>
            {current.next_run_at
              ? `${dateTime(current.next_run_at)} (${timeAgo(current.next_run_at)})`
              : 'none while it is off'}
          </dd>
          <dt>Restore test</dt>
          <dd>
            {current.verify_cron ? (
              <>
                <code>{current.verify_cron}</code>
                {current.verify_next_run_at
                  ? `, next ${dateTime(current.verify_next_run_at)} (${timeAgo(current.verify_next_run_at)})`
                  : ''}
              </>
            ) : (
              'none scheduled (Verify tests one backup on demand)'
            )}
          </dd>
          <dt>Retention</dt>
          <dd>{retentionText(current.retention)}</dd>
        </dl>
      ) : (
        <p className="muted">No schedule: backups are taken on demand only.</p>
      )}
      {editing ? (
        <BackupScheduleForm
          serviceId={serviceId}
          schedule={current}
          onSaved={() => {
            setEditing(false);
            setNotice('Backup schedule saved.');
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}
      {canChange && current && !editing ? (
        removing ? (
          <ConfirmQuestion
            label="Confirm remove schedule"
            question="Remove the backup schedule? No scheduled backup is taken afterwards; the backups taken so far stay."
            confirm="Remove schedule"
            busy={remove.isPending}
            onConfirm={() => remove.mutate()}
            onCancel={() => setRemoving(false)}
          />
        ) : (
          <button type="button" className="ghost" onClick={() => setRemoving(true)}>
            Remove schedule
          </button>
        )
      ) : null}
      <ProblemAlert error={remove.error} />
    </section>
  );
}
