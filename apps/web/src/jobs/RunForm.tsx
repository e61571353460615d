import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { must, type JobRun } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ProblemAlert } from '../components/feedback.tsx';
import { Field, fieldErrors } from '../components/Field.tsx';
import { ComponentChoice } from '../service/ComponentChoice.tsx';
import { useComponents } from '../service/components-query.ts';
import { refreshJobs } from './job-api.ts';
import { commandFromLines } from './job-format.ts';

const DEFAULT_TIMEOUT_S = 600;

interface RunFormProps {
  serviceId: string;
  onStarted: (run: JobRun) => void;
  onCancel: () => void;
}

/**
 * A one-off run (docs/jobs.md#one-off-runs): the command one argument per line, as the schedule
 * form takes it (no shell splitting the API would not do), a component and a timeout. What the API
 * refuses is shown under the field it names; the run itself is followed by the Jobs tab's run panel.
 */
export function RunForm({ serviceId, onStarted, onCancel }: RunFormProps) {
  const queries = useQueryClient();
  const components = useComponents(serviceId);
  const [command, setCommand] = useState('');
  const [component, setComponent] = useState('');
  const [timeout, setTimeoutSeconds] = useState(DEFAULT_TIMEOUT_S);
  const start = useMutation({
    mutationFn: () =>
      must(
        api.POST('/api/services/{id}/runs', {
          params: { path: { id: serviceId } },
          body: {
            command: commandFromLines(command),
            component: component.trim() || undefined,
            timeout: Number.isFinite(timeout) ? timeout : undefined,
          },
        }),
      ),
    onSuccess: onStarted,
    onSettled: () => refreshJobs(queries, serviceId),
  });
  const errors = fieldErrors(start.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    start.mutate();
  };
  const id = (field: string) => `run-new-${field}`;

  return (
    <section className="card" aria-labelledby={id('heading')}>
      <h3 id={id('heading')}>Run a command</h3>
      <form className="stack" onSubmit={submit}>
        <Field
          id={id('command')}
          label="Command"
          hint={
            'One argument per line, run once without a shell in a new container of the current release; for a shell, write sh, then -c, then the script'
          }
          error={errors.get('command')}
        >
          {(control) => (
            <textarea
              {...control}
              className="code"
              rows={3}
              value={command}
              required
              onChange={(e) => setCommand(e.target.value)}
            />
          )}
        </Field>
        <div className="form-row">
          <Field
            id={id('component')}
            label="Component"
            hint="Whose image, variables and limits the run takes"
            error={errors.get('component')}
          >
            {(control) => (
              <ComponentChoice
                control={control}
                components={components}
                value={component}
                onChange={setComponent}
              />
            )}
          </Field>
          <Field id={id('timeout')} label="Timeout (seconds)" error={errors.get('timeout')}>
            {(control) => (
              <input
                {...control}
                type="number"
                min={1}
                max={3600}
                value={Number.isFinite(timeout) ? timeout : ''}
                onChange={(e) => setTimeoutSeconds(e.target.valueAsNumber)}
              />
            )}
          </Field>
        </div>
        <ProblemAlert error={start.error} />
        <div className="form-row">
          <button type="submit" className="primary" disabled={start.isPending}>
            {start.isPending ? 'Starting…' : 'Start run'}
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
