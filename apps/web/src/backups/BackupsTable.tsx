import type { Backup, Service } from '@hostctl/api-client';
import { StatusBadge } from '../components/feedback.tsx';
import { dateTime, timeAgo } from '../format.ts';
import { servicePath } from '../routes.ts';
import { Link } from '../router.tsx';
import {
  backupState,
  duration,
  isRestoring,
  restorable,
  restoreState,
  size,
  verifyState,
} from './backup-format.ts';

/** What the caller may do to a backup; absent: nothing (viewers), so no control is shown. */
export interface BackupControls {
  busy: boolean;
  onVerify: (backup: Backup) => void;
  onRestore: (backup: Backup) => void;
  /** Absent for roles that may not create services (the clone creates one). */
  onClone: ((backup: Backup) => void) | undefined;
}

interface BackupsTableProps {
  service: Service;
  backups: readonly Backup[];
  controls: BackupControls | undefined;
}

/** One row per backup run: when, its state in words, what it holds and how its check and restore went. */
export function BackupsTable({ service, backups, controls }: BackupsTableProps) {
  return (
    // Many columns scroll sideways on a phone: the region takes focus so a keyboard can scroll it.
    <div className="table-scroll" role="region" aria-label="Backups table" tabIndex={0}>
      <table>
        <caption className="visually-hidden">Backups of {service.name}, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Taken</th>
            <th scope="col">Status</th>
            <th scope="col">Size</th>
            <th scope="col">Duration</th>
            <th scope="col">Volumes</th>
            <th scope="col">Release</th>
            <th scope="col">Check</th>
            <th scope="col">Last restore</th>
            {controls ? (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {backups.map((backup) => (
            <tr key={backup.id}>
              <th scope="row">
                {dateTime(backup.created_at)}
                <br />
                <span className="muted">
                  {timeAgo(backup.created_at)},{' '}
                  {backup.scheduled_for ? `scheduled for ${dateTime(backup.scheduled_for)}` : 'on demand'}
                </span>
              </th>
              <td>
                <StatusBadge status={backup.status} /> {backupState(backup)}
                {backup.status === 'succeeded' ? (
                  <span className="muted">
                    {' '}
                    ({backup.method === 'stop' ? 'service stopped briefly' : 'taken live'}, {backup.target}{' '}
                    target)
                  </span>
                ) : null}
              </td>
              <td>{size(backup.size_bytes)}</td>
              <td>{duration(backup.duration_ms)}</td>
              <td>
                {backup.volumes.length === 0 ? (
                  '—'
                ) : (
                  <ul className="plain">
                    {backup.volumes.map((volume) => (
                      <li key={volume.name}>
                        <code>{volume.name}</code> {size(volume.bytes)}, {volume.files}{' '}
                        {volume.files === 1 ? 'file' : 'files'}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td>
                {backup.release_id ? (
                  <Link to={servicePath(service.id, 'deployments')}>
                    <span className="visually-hidden">Release </span>
                    <code>{backup.release_id.slice(0, 8)}</code>
                  </Link>
                ) : (
                  'none recorded'
                )}
              </td>
              <td>{verifyState(backup)}</td>
              <td>
                {backup.last_restore ? (
                  <>
                    {restoreState(backup.last_restore, service.id)}
                    {backup.last_restore.service_id !== service.id ? (
                      <>
                        {' '}
                        <Link to={servicePath(backup.last_restore.service_id)}>open the new service</Link>
                      </>
                    ) : null}
                  </>
                ) : (
                  'Never restored'
                )}
              </td>
              {controls ? (
                <td className="row-actions">
                  <RowControls backup={backup} controls={controls} />
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function RowControls({ backup, controls }: { backup: Backup; controls: BackupControls }) {
  if (!restorable(backup)) return null;
  const which = <span className="visually-hidden"> the backup of {dateTime(backup.created_at)}</span>;
  const checking = backup.verify_status === 'queued' || backup.verify_status === 'running';
  return (
    <>
      <button type="button" disabled={controls.busy || checking} onClick={() => controls.onVerify(backup)}>
        Verify{which}
      </button>
      <button
        type="button"
        className="ghost"
        disabled={isRestoring(backup.last_restore)}
        onClick={() => controls.onRestore(backup)}
      >
        Restore{which}
      </button>
      {controls.onClone ? (
        <button type="button" className="ghost" onClick={() => controls.onClone?.(backup)}>
          Restore into a new service
          <span className="visually-hidden"> from the backup of {dateTime(backup.created_at)}</span>
        </button>
      ) : null}
    </>
  );
}
