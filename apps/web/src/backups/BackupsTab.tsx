import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { must, type Backup, type Me, type Service } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ListState, Pager, ProblemAlert } from '../components/feedback.tsx';
import { dateTime, timeAgo } from '../format.ts';
import { allows } from '../permissions.ts';
import { BACKUPS_PER_PAGE, refreshBackups, useBackups } from './backup-api.ts';
import { BackupsTable, type BackupControls } from './BackupsTable.tsx';
import { CloneForm, RestoreQuestion } from './RestorePanels.tsx';
import { BackupScheduleSection } from './BackupScheduleSection.tsx';

type Asking = { kind: 'restore' | 'clone'; backup: Backup } | null;

/**
 * The service's backups (docs/backups.md): the list with each run's state, size, duration,
 * volumes, release and check, kept current while something runs; Back up now, Verify, Restore
 * (asked first, naming what is replaced) and Restore into a new service, each only for the roles
 * the API lets do it; and the backup schedule with its retention.
 */
export function BackupsTab({ service, me }: { service: Service; me: Me }) {
  const queries = useQueryClient();
  const [page, setPage] = useState(1);
  const [asking, setAsking] = useState<Asking>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const list = useBackups(service.id, page);
  const rows = list.data?.data ?? [];
  const canOperate = allows(me, 'services:operate');

  const backUp = useMutation({
    mutationFn: () => must(api.POST('/api/services/{id}/backups', { params: { path: { id: service.id } } })),
    onMutate: () => setNotice(null),
    onSuccess: (backup) => {
      setPage(1);
      setNotice(`Backup ${backup.id.slice(0, 8)} queued; this list follows it until it ends.`);
    },
    onSettled: () => refreshBackups(queries, service.id),
  });
  const verify = useMutation({
    mutationFn: (backup: Backup) =>
      must(api.POST('/api/backups/{id}/verify', { params: { path: { id: backup.id } } })),
    onMutate: () => setNotice(null),
    onSuccess: (backup) => setNotice(`Check of backup ${backup.id.slice(0, 8)} queued.`),
    onSettled: () => refreshBackups(queries, service.id),
  });

  const controls: BackupControls | undefined = canOperate
    ? {
        busy: verify.isPending,
        onVerify: (backup) => verify.mutate(backup),
        onRestore: (backup) => setAsking({ kind: 'restore', backup }),
        onClone: allows(me, 'services:create') ? (backup) => setAsking({ kind: 'clone', backup }) : undefined,
      }
    : undefined;
  // The API's figure for the whole service, not only the page read (docs/backups.md#verification).
  const verified = list.data?.last_verified ?? null;

  return (
    <>
      <section aria-labelledby="backups-heading">
        <div className="page-heading">
          <h2 id="backups-heading">Backups</h2>
          {canOperate ? (
            <button
              type="button"
              className="primary"
              disabled={backUp.isPending}
              onClick={() => backUp.mutate()}
            >
              Back up now
            </button>
          ) : null}
        </div>
        <p className="muted">
          {verified
            ? `Last verified backup: taken ${timeAgo(verified.taken_at)} (${dateTime(verified.taken_at)}), checked ${timeAgo(verified.verified_at)}.`
            : 'No backup of this service has passed a check yet.'}
        </p>
        <ProblemAlert error={backUp.error ?? verify.error} />
        <div role="status" aria-live="polite">
          {notice ? <p className="notice">{notice}</p> : null}
        </div>
        {asking?.kind === 'restore' ? (
          <RestoreQuestion
            key={asking.backup.id}
            service={service}
            backup={asking.backup}
            onDone={(message) => {
              setAsking(null);
              setNotice(message);
            }}
            onCancel={() => setAsking(null)}
          />
        ) : null}
        {asking?.kind === 'clone' ? (
          <CloneForm
            key={asking.backup.id}
            service={service}
            backup={asking.backup}
            onDone={(message) => {
              setAsking(null);
              setNotice(message);
            }}
            onCancel={() => setAsking(null)}
          />
        ) : null}
        <ListState
          noun="backups"
          isPending={list.isPending}
          error={list.error}
          isEmpty={rows.length === 0}
          empty={`No backups yet.${canOperate ? ' Back up now takes the first one.' : ''}`}
        >
          <BackupsTable service={service} backups={rows} controls={controls} />
        </ListState>
        <Pager
          page={page}
          perPage={BACKUPS_PER_PAGE}
          total={list.data?.total}
          onPage={setPage}
          label="Backup pages"
        />
      </section>
      <BackupScheduleSection serviceId={service.id} canChange={canOperate} />
    </>
  );
}
