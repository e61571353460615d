import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { must, toProblem, type BackupSchedule, type BackupScheduleBody } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ProblemAlert } from '../components/feedback.tsx';
import { Field } from '../components/Field.tsx';
import { refreshBackups, showBackupSchedule } from './backup-api.ts';

type Rule = keyof BackupSchedule['retention'];
type Values = { cron: string; time_zone: string; enabled: boolean; verify_cron: string } & Record<
  Rule,
  string
>;

const RULES: [Rule, string, string][] = [
  ['keep_last', 'Keep the last', '1 to 1000 snapshots'],
  ['keep_daily', 'Daily', 'one a day, 0 to 1000 days'],
  ['keep_weekly', 'Weekly', 'one a week, 0 to 520 weeks'],
  ['keep_monthly', 'Monthly', 'one a month, 0 to 240 months'],
];
const ZONES: readonly string[] = Intl.supportedValuesOf('timeZone');
const text = (value: number | null) => (value === null ? '' : String(value));

function valuesOf(schedule: BackupSchedule | null): Values {
  const retention = schedule?.retention;
  return {
    cron: schedule?.cron ?? '',
    time_zone: schedule?.time_zone ?? 'UTC',
    enabled: schedule?.enabled ?? true,
    verify_cron: schedule?.verify_cron ?? '',
    keep_last: text(retention?.keep_last ?? null),
    keep_daily: text(retention?.keep_daily ?? null),
    keep_weekly: text(retention?.keep_weekly ?? null),
    keep_monthly: text(retention?.keep_monthly ?? null),
  };
}

/** The PUT body: the whole schedule; an empty rule is null (it falls back to the labels and defaults). */
function bodyOf(values: Values): BackupScheduleBody {
  const rule = (value: string) => (value.trim() === '' ? null : Number(value));
  return {
    cron: values.cron,
    time_zone: values.time_zone,
    enabled: values.enabled,
    // Empty: no restore test (the PUT replaces the whole schedule, so an edit sends it again).
    verify_cron: values.verify_cron.trim() === '' ? null : values.verify_cron,
    retention: Object.fromEntries(RULES.map(([key]) => [key, rule(values[key])])),
  };
}

/**
 * The API's messages by field: `/body/cron` → `cron`, `/body/retention/keep_last` → `keep_last`
 * (each shown under its control and read with it).
 */
function scheduleErrors(error: unknown): Map<string, string> {
  const found = new Map<string, string>();
  if (error === null || error === undefined) return found;
  for (const { path, message } of toProblem(error).errors) {
    const field = /^\/body\/(?:retention\/)?([^/]+)/.exec(path)?.[1];
    if (field && !found.has(field)) found.set(field, message);
  }
  return found;
}

interface FormProps {
  serviceId: string;
  /** The schedule edited; null: a new one. */
  schedule: BackupSchedule | null;
  onSaved: () => void;
  onCancel: () => void;
}

/** Sets or replaces the backup schedule (PUT replaces it whole, docs/backups.md#schedules). */
export function BackupScheduleForm({ serviceId, schedule, onSaved, onCancel }: FormProps) {
  const queries = useQueryClient();
  const [values, setValues] = useState<Values>(() => valuesOf(schedule));
  const save = useMutation({
    mutationFn: (next: Values) =>
      must(
        api.PUT('/api/services/{id}/backup-schedule', {
          params: { path: { id: serviceId } },
          body: bodyOf(next),
        }),
      ),
    onSuccess: (saved) => {
      showBackupSchedule(queries, serviceId, saved);
      onSaved();
    },
    onSettled: () => refreshBackups(queries, serviceId),
  });
  const errors = scheduleErrors(save.error);
  const set = <K extends keyof Values>(key: K, value: Values[K]) =>
    setValues((v) => ({ ...v, [key]: value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(values);
  };
  const id = (field: string) => `backup-schedule-${field}`;

  return (
    <section className="card" aria-labelledby={id('heading')}>
      <h3 id={id('heading')}>{schedule ? 'Edit the backup schedule' : 'New backup schedule'}</h3>
      <form className="stack" onSubmit={submit}>
        <Field
          id={id('cron')}
          label="Cron expression"
          hint="minute hour day month weekday, or @daily…; at most one backup an hour by default"
          error={errors.get('cron')}
        >
          {(control) => (
            <input
              {...control}
              value={values.cron}
              required
              className="code"
              onChange={(e) => set('cron', e.target.value)}
            />
          )}
        </Field>
        <Field
          id={id('time_zone')}
          label="Time zone"
          hint="IANA name the expression is read in"
          error={errors.get('time_zone')}
        >
          {(control) => (
            <>
              <input
                {...control}
                value={values.time_zone}
                list={id('zones')}
                required
                onChange={(e) => set('time_zone', e.target.value)}
              />
              <datalist id={id('zones')}>
                {ZONES.map((zone) => (
                  <option key={zone} value={zone} />
                ))}
              </datalist>
            </>
          )}
        </Field>
        <Field
          id={id('verify_cron')}
          label="Restore test"
          hint="cron in the same time zone: restores the latest backup into scratch volumes and runs the components' verify commands; empty: none"
          error={errors.get('verify_cron')}
        >
          {(control) => (
            <input
              {...control}
              value={values.verify_cron}
              className="code"
              onChange={(e) => set('verify_cron', e.target.value)}
            />
          )}
        </Field>
        <fieldset>
          <legend>Retention (empty: from the compose labels or the operator&apos;s defaults)</legend>
          <div className="form-row">
            {RULES.map(([key, label, hint]) => (
              <Field key={key} id={id(key)} label={label} hint={hint} error={errors.get(key)}>
                {(control) => (
                  <input
                    {...control}
                    type="number"
                    inputMode="numeric"
                    value={values[key]}
                    onChange={(e) => set(key, e.target.value)}
                  />
                )}
              </Field>
            ))}
          </div>
        </fieldset>
        <label className="inline">
          <input
            type="checkbox"
            checked={values.enabled}
            onChange={(e) => set('enabled', e.target.checked)}
          />
          On (off keeps the retention for on-demand backups)
        </label>
        <ProblemAlert error={save.error} />
        <div className="form-row">
          <button type="submit" className="primary" disabled={save.isPending}>
            Save schedule
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
