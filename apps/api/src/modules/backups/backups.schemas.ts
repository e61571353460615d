import { Type, type Static } from 'typebox';
import { Id, PageQuery, Timestamp } from '../../http/schemas.js';
import { CreateServiceBody } from '../services/services.schemas.js';

const RunStatus = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
]);
/**
 * `expired`: the retention policy forgot its snapshots; it can no longer be restored. `missed`: a
 * time of the backup schedule no worker reached within the grace (docs/backups.md#schedules).
 */
const BackupStatus = Type.Union([...RunStatus.anyOf, Type.Literal('expired'), Type.Literal('missed')]);
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

/** A backup run and its snapshots (docs/backups.md); the repository's password never appears. */
export const Backup = Type.Object(
  {
    id: Id,
    service_id: Id,
    status: BackupStatus,
    method: Type.Union([Type.Literal('stop'), Type.Literal('live')]),
    /** `local` or `s3` (the operator's), `customer` (its own bucket): it is restored from there only. */
    target: Type.String(),
    /** The release (deployment) that ran when the backup was taken. */
    release_id: Nullable(Id),
    volumes: Type.Array(
      Type.Object({
        name: Type.String(),
        snapshot_id: Type.String(),
        bytes: Type.Integer(),
        files: Type.Integer(),
      }),
    ),
    size_bytes: Nullable(Type.Integer()),
    duration_ms: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    log: Type.String(),
    /** The last repository check (POST /api/backups/:id/verify); null: never checked. */
    verify_status: Nullable(
      Type.Union([
        Type.Literal('queued'),
        Type.Literal('running'),
        Type.Literal('passed'),
        Type.Literal('failed'),
      ]),
    ),
    verify_error: Nullable(Type.String()),
    verified_at: Nullable(Timestamp),
    /**
     * The newest restore of this backup, into its own service or a new one (`service_id` tells
     * which); null: never restored. Its own route (GET /api/restores/:id) has the log.
     */
    last_restore: Nullable(
      Type.Object({
        id: Id,
        service_id: Id,
        status: RunStatus,
        error: Nullable(Type.String()),
        created_at: Timestamp,
        finished_at: Nullable(Timestamp),
      }),
    ),
    /** The time of the backup schedule this run stands for; null: taken on demand. */
    scheduled_for: Nullable(Timestamp),
    created_at: Timestamp,
    started_at: Nullable(Timestamp),
    finished_at: Nullable(Timestamp),
  },
  { description: 'A backup run of a service' },
);
export type Backup = Static<typeof Backup>;

export const BackupList = Type.Object({
  data: Type.Array(Backup),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
  last_verified: Nullable(
    Type.Object(
      {
        backup_id: Id,
        /** When the backup was asked for: the age of the newest data proven restorable. */
        taken_at: Timestamp,
        verified_at: Nullable(Timestamp),
      },
      {
        description:
          "The service's newest succeeded backup whose last check (a restore test) passed, of all its backups, not only this page; null while none did",
      },
    ),
  ),
});

export const BackupListQuery = Type.Object(PageQuery, { additionalProperties: false });

export const Restore = Type.Object(
  {
    id: Id,
    backup_id: Id,
    service_id: Id,
    status: RunStatus,
    error: Nullable(Type.String()),
    log: Type.String(),
    created_at: Timestamp,
    started_at: Nullable(Timestamp),
    finished_at: Nullable(Timestamp),
  },
  {
    description:
      'A restore of a backup into its own service, or (POST /api/backups/:id/clone) into a new one: then service_id is the new service',
  },
);
export type Restore = Static<typeof Restore>;

/** POST /api/backups/:id/clone: the new service's name, checked as a create's (docs/backups.md). */
export const CloneBody = Type.Object(
  { name: CreateServiceBody.properties.name },
  { additionalProperties: false, description: 'A restore into a new service cloned from the backup' },
);
