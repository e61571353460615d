import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { must, type Service } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ProblemAlert } from '../components/feedback.tsx';
import { dateTime } from '../format.ts';
import { invalidateService } from './actions.ts';

type Changes = Record<string, string | null>;

/**
 * The service's secret variables (docs/secrets.md#secret-variables): the API never sends their
 * values, so each shows masked until Reveal asks the audited reveal route for it. Callers who may
 * change the service (the same who may reveal) can replace, delete and add secrets; a viewer sees
 * the names only.
 */
export function SecretVariablesEditor({ service, canEdit }: { service: Service; canEdit: boolean }) {
  const queries = useQueryClient();
  const [status, setStatus] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (changes: Changes) =>
      must(
        api.PATCH('/api/services/{id}', {
          params: { path: { id: service.id } },
          body: { secret_variables: changes },
        }),
      ),
    onSuccess: () => setStatus('Secret saved; a redeploy applying it has been queued.'),
    onSettled: () => invalidateService(queries, service.id),
  });
  const names = Object.keys(service.secret_variables).sort();

  return (
    <section className="card" aria-labelledby="secret-variables-heading">
      <h2 id="secret-variables-heading">Secret variables</h2>
      <p className="muted">Deployed like variables; their values are never shown unless revealed.</p>
      {names.length === 0 ? <p className="muted">No secret variables.</p> : null}
      <ul className="plain">
        {names.map((name) => (
          <SecretRow
            key={name}
            service={service}
            name={name}
            updatedAt={service.secret_variables[name]?.updated_at ?? ''}
            canEdit={canEdit}
            onChange={(changes) => {
              setStatus(null);
              save.mutate(changes);
            }}
            isSaving={save.isPending}
          />
        ))}
      </ul>
      {canEdit ? (
        <AddSecret
          onAdd={(name, value) => {
            setStatus(null);
            save.mutate({ [name]: value });
          }}
          isSaving={save.isPending}
        />
      ) : null}
      <ProblemAlert error={save.error} />
      {status ? (
        <p className="notice" role="status">
          {status}
        </p>
      ) : null}
    </section>
  );
}

function SecretRow(props: {
  service: Service;
  name: string;
  updatedAt: string;
  canEdit: boolean;
  isSaving: boolean;
  onChange: (changes: Changes) => void;
}) {
  const { service, name, canEdit } = props;
  const [revealed, setRevealed] = useState<string | null>(null);
  const [replacement, setReplacement] = useState('');
  const reveal = useMutation({
    mutationFn: () =>
      must(
        api.POST('/api/services/{id}/secret-variables/reveal', {
          params: { path: { id: service.id } },
          body: { name },
        }),
      ),
    onSuccess: (answer) => setRevealed(answer.value),
  });
  const valueId = `secret-${name}-value`;
  return (
    <li className="row variable">
      <label htmlFor={valueId}>{name}</label>
      <input
        id={valueId}
        type={revealed === null ? 'password' : 'text'}
        value={revealed ?? '••••••••'}
        readOnly
        autoComplete="off"
      />
      <span className="muted">set {props.updatedAt ? dateTime(props.updatedAt) : ''}</span>
      {canEdit ? (
        <button
          type="button"
          className="ghost"
          aria-pressed={revealed !== null}
          aria-label={revealed === null ? `Reveal ${name}` : `Hide ${name}`}
          disabled={reveal.isPending}
          onClick={() => (revealed === null ? reveal.mutate() : setRevealed(null))}
        >
          {revealed === null ? 'Reveal' : 'Hide'}
        </button>
      ) : null}
      {canEdit ? (
        <form
          className="row"
          onSubmit={(event) => {
            event.preventDefault();
            if (replacement === '') return;
            props.onChange({ [name]: replacement });
            setReplacement('');
            setRevealed(null);
          }}
        >
          <label>
            New value for {name}
            <input
              type="password"
              value={replacement}
              autoComplete="new-password"
              onChange={(e) => setReplacement(e.target.value)}
            />
          </label>
          <button type="submit" className="ghost" disabled={props.isSaving || replacement === ''}>
            Replace {name}
          </button>
          <button
            type="button"
            className="ghost"
            disabled={props.isSaving}
            onClick={() => props.onChange({ [name]: null })}
          >
            Delete {name}
          </button>
        </form>
      ) : null}
      <ProblemAlert error={reveal.error} />
    </li>
  );
}

function AddSecret({ onAdd, isSaving }: { onAdd: (name: string, value: string) => void; isSaving: boolean }) {
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  return (
    <form
      className="form-row"
      onSubmit={(event) => {
        event.preventDefault();
        onAdd(name, value);
        setName('');
        setValue('');
      }}
    >
      <label>
        Secret name
        <input
          value={name}
          required
          pattern="[A-Za-z_][A-Za-z0-9_]*"
          onChange={(e) => setName(e.target.value)}
        />
      </label>
      <label>
        Secret value
        <input
          type="password"
          value={value}
          required
          autoComplete="new-password"
          onChange={(e) => setValue(e.target.value)}
        />
      </label>
      <button type="submit" className="primary" disabled={isSaving}>
        Add secret
      </button>
    </form>
  );
}
