import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { must, type NewSchedule, type Schedule, type ScheduleChange } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ProblemAlert } from '../components/feedback.tsx';
import { Field, fieldErrors } from '../components/Field.tsx';
import { refreshJobs } from './job-api.ts';
import { commandFromLines, commandToLines } from './job-format.ts';

type Values = Required<Omit<NewSchedule, 'component' | 'command'>> & { component: string; command: string };

const DEFAULTS: Values = {
  name: '',
  cron: '',
  time_zone: 'UTC',
  command: '',
  component: '',
  timeout: 600,
  retries: 0,
  overlap_policy: 'forbid',
  catch_up: 'one',
  enabled: true,
};

const valuesOf = (schedule: Schedule): Values => ({
  name: schedule.name,
  cron: schedule.cron,
  time_zone: schedule.time_zone,
  command: commandToLines(schedule.command),
  component: schedule.component ?? '',
  timeout: schedule.timeout,
  retries: schedule.retries,
  overlap_policy: schedule.overlap_policy,
  catch_up: schedule.catch_up,
  enabled: schedule.enabled,
});

/** The fields that differ from the schedule: a PATCH of an unchanged cron would still be a change. */
function changes(schedule: Schedule, values: Values): ScheduleChange {
  const wanted: ScheduleChange = {
    ...values,
    command: commandFromLines(values.command),
    component: values.component.trim() === '' ? null : values.component.trim(),
  };
  const before: Record<string, unknown> = { ...schedule };
  return Object.fromEntries(
    Object.entries(wanted).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(before[key])),
  );
}

const ZONES: readonly string[] = Intl.supportedValuesOf('timeZone');

interface ScheduleFormProps {
  serviceId: string;
  /** The schedule edited; a new one when absent. */
  schedule?: Schedule;
  onSaved: (schedule: Schedule, verb: 'created' | 'saved') => void;
  onCancel: () => void;
}

/**
 * A new schedule or an edit of one. The API checks everything (cron, zone, component, command);
 * what it refuses is shown under the field it names and read with it (aria-describedby).
 */
export function ScheduleForm({ serviceId, schedule, onSaved, onCancel }: ScheduleFormProps) {
  const queries = useQueryClient();
  const [values, setValues] = useState<Values>(schedule ? valuesOf(schedule) : DEFAULTS);
  const [unchanged, setUnchanged] = useState(false);
  const save = useMutation({
    mutationFn: async (next: Values): Promise<Schedule> => {
      if (schedule)
        return must(
          api.PATCH('/api/schedules/{id}', {
            params: { path: { id: schedule.id } },
            body: changes(schedule, next),
          }),
        );
      const body: NewSchedule = {
        ...next,
        command: commandFromLines(next.command),
        component: next.component.trim() || undefined,
      };
      return must(api.POST('/api/services/{id}/schedules', { params: { path: { id: serviceId } }, body }));
    },
    onSuccess: (saved) => onSaved(saved, schedule ? 'saved' : 'created'),
    onSettled: () => refreshJobs(queries, serviceId),
  });
  const errors = fieldErrors(save.error);
  const set = <K extends keyof Values>(key: K, value: Values[K]) =>
    setValues((v) => ({ ...v, [key]: value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const nothing = schedule !== undefined && Object.keys(changes(schedule, values)).length === 0;
    setUnchanged(nothing);
    if (!nothing) save.mutate(values);
  };
  const prefix = schedule ? `schedule-${schedule.id}` : 'schedule-new';
  const id = (field: string) => `${prefix}-${field}`;
  const heading = schedule ? `Edit ${schedule.name}` : 'New schedule';

  return (
    <section className="card" aria-labelledby={id('heading')}>
      <h3 id={id('heading')}>{heading}</h3>
      <form className="stack" onSubmit={submit}>
        <Field
          id={id('name')}
          label="Name"
          hint="Lowercase letters, digits and hyphens"
          error={errors.get('name')}
        >
          {(control) => (
            <input {...control} value={values.name} required onChange={(e) => set('name', e.target.value)} />
          )}
        </Field>
        <Field
          id={id('cron')}
          label="Cron expression"
          hint="minute hour day month weekday (a sixth field first for seconds), or @daily, @hourly…"
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
          id={id('command')}
          label="Command"
          hint={'One argument per line, run without a shell; for one, write sh, then -c, then the script'}
          error={errors.get('command')}
        >
          {(control) => (
            <textarea
              {...control}
              className="code"
              rows={3}
              value={values.command}
              required
              onChange={(e) => set('command', e.target.value)}
            />
          )}
        </Field>
        <Field
          id={id('component')}
          label="Component"
          hint="Empty: the web component"
          error={errors.get('component')}
        >
          {(control) => (
            <input {...control} value={values.component} onChange={(e) => set('component', e.target.value)} />
          )}
        </Field>
        <div className="form-row">
          <Field id={id('timeout')} label="Timeout (seconds)" error={errors.get('timeout')}>
            {(control) => (
              <input
                {...control}
                type="number"
                min={1}
                max={3600}
                value={values.timeout}
                onChange={(e) => set('timeout', e.target.valueAsNumber)}
              />
            )}
          </Field>
          <Field id={id('retries')} label="Retries" error={errors.get('retries')}>
            {(control) => (
              <input
                {...control}
                type="number"
                min={0}
                max={5}
                value={values.retries}
                onChange={(e) => set('retries', e.target.valueAsNumber)}
              />
            )}
          </Field>
          <Field id={id('overlap_policy')} label="While a run goes on" error={errors.get('overlap_policy')}>
            {(control) => (
              <select
                {...control}
                value={values.overlap_policy}
                onChange={(e) => set('overlap_policy', e.target.value as Values['overlap_policy'])}
              >
                <option value="forbid">skip the new time (forbid)</option>
                <option value="replace">stop it, start the new one (replace)</option>
                <option value="allow">run both (allow)</option>
              </select>
            )}
          </Field>
          <Field id={id('catch_up')} label="After missed times" error={errors.get('catch_up')}>
            {(control) => (
              <select
                {...control}
                value={values.catch_up}
                onChange={(e) => set('catch_up', e.target.value as Values['catch_up'])}
              >
                <option value="one">run the latest once</option>
                <option value="none">record them only</option>
              </select>
            )}
          </Field>
        </div>
        <label className="inline">
          <input
            type="checkbox"
            checked={values.enabled}
            onChange={(e) => set('enabled', e.target.checked)}
          />
          Enabled
        </label>
        <ProblemAlert error={save.error} />
        {unchanged ? (
          <p className="muted" role="status">
            Nothing changed.
          </p>
        ) : null}
        <div className="form-row">
          <button type="submit" className="primary" disabled={save.isPending}>
            {schedule ? 'Save schedule' : 'Create schedule'}
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
