import { useMutation } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { dateTime } from '../format.ts';
import { ProblemAlert } from './feedback.tsx';
import type { VariableChanges } from './VariablesForm.tsx';

interface SecretsFormProps {
  /** Secret names with when each was set: the API never sends a secret's value. */
  secrets: Record<string, { updated_at: string }>;
  canEdit: boolean;
  /** The audited reveal route: resolves to one secret's value. */
  reveal: (name: string) => Promise<string>;
  save: (changes: VariableChanges) => Promise<unknown>;
  onSettled?: () => Promise<void>;
  savedText: string;
  /** How a failed save is shown; the problem's title and detail by default. */
  errorAlert?: (error: unknown) => ReactNode;
}

/**
 * Secret variables of a service or a variable group (docs/secrets.md#secret-variables): each shows
 * masked until Reveal asks the audited reveal route for it. Callers who may change the owner (the
 * same who may reveal) can replace, delete and add secrets; a viewer sees the names only.
 */
export function SecretsForm({
  secrets,
  canEdit,
  reveal,
  save,
  onSettled,
  savedText,
  errorAlert,
}: SecretsFormProps) {
  const [status, setStatus] = useState<string | null>(null);
  const mutation = useMutation({
    mutationFn: save,
    onSuccess: () => setStatus(savedText),
    onSettled,
  });
  const change = (changes: VariableChanges) => {
    setStatus(null);
    mutation.mutate(changes);
  };
  const names = Object.keys(secrets).sort();

  return (
    <section className="card" aria-labelledby="secret-variables-heading">
      <h2 id="secret-variables-heading">Secret variables</h2>
      <p className="muted">Deployed like variables; their values are never shown unless revealed.</p>
      {names.length === 0 ? <p className="muted">No secret variables.</p> : null}
      <ul className="plain">
        {names.map((name) => (
          <SecretRow
            key={name}
            name={name}
            updatedAt={secrets[name]?.updated_at ?? ''}
            canEdit={canEdit}
            reveal={reveal}
            onChange={change}
            isSaving={mutation.isPending}
          />
        ))}
      </ul>
      {canEdit ? (
        <AddSecret onAdd={(name, value) => change({ [name]: value })} isSaving={mutation.isPending} />
      ) : null}
      {errorAlert ? errorAlert(mutation.error) : <ProblemAlert error={mutation.error} />}
      {status ? (
        <p className="notice" role="status">
          {status}
        </p>
      ) : null}
    </section>
  );
}

function SecretRow(props: {
  name: string;
  updatedAt: string;
  canEdit: boolean;
  isSaving: boolean;
  reveal: (name: string) => Promise<string>;
  onChange: (changes: VariableChanges) => void;
}) {
  const { name, canEdit } = props;
  const [revealed, setRevealed] = useState<string | null>(null);
  const [replacement, setReplacement] = useState('');
  const reveal = useMutation({
    mutationFn: () => props.reveal(name),
    onSuccess: (value) => setRevealed(value),
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
