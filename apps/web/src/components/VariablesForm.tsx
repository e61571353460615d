import { useMutation } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { ProblemAlert } from './feedback.tsx';

interface Row {
  name: string;
  value: string;
  revealed: boolean;
}

export type VariableChanges = Record<string, string | null>;

const toRows = (variables: Record<string, string>): Row[] =>
  Object.entries(variables).map(([name, value]) => ({ name, value, revealed: false }));

interface VariablesFormProps {
  variables: Record<string, string>;
  canEdit: boolean;
  /** Sends the changes and resolves to the variables as saved. */
  save: (changes: VariableChanges) => Promise<Record<string, string>>;
  onSettled?: () => Promise<void>;
  /** The status shown after a save ("Variables saved; …"). */
  savedText: string;
  /** How a failed save is shown; the problem's title and detail by default. */
  errorAlert?: (error: unknown) => ReactNode;
}

/**
 * Plain variables of a service or a variable group, values masked until revealed one by one.
 * Saving sends only the changes: new or changed values, and null for removed names (the API merges).
 */
export function VariablesForm({
  variables,
  canEdit,
  save,
  onSettled,
  savedText,
  errorAlert,
}: VariablesFormProps) {
  const [rows, setRows] = useState<Row[]>(() => toRows(variables));
  const [saved, setSaved] = useState(false);
  const mutation = useMutation({
    mutationFn: () => {
      const changes: VariableChanges = {};
      const kept = new Set(rows.map((row) => row.name));
      for (const name of Object.keys(variables)) if (!kept.has(name)) changes[name] = null;
      for (const row of rows)
        if (row.name && variables[row.name] !== row.value) changes[row.name] = row.value;
      return save(changes);
    },
    onSuccess: (updated) => {
      setRows(toRows(updated));
      setSaved(true);
    },
    onSettled,
  });
  const change = (index: number, patch: Partial<Row>) => {
    setSaved(false);
    setRows((current) => current.map((row, i) => (i === index ? { ...row, ...patch } : row)));
  };

  return (
    <section className="card" aria-labelledby="variables-heading">
      <h2 id="variables-heading">Variables</h2>
      {rows.length === 0 ? <p className="muted">No variables.</p> : null}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          mutation.mutate();
        }}
      >
        <ul className="plain">
          {rows.map((row, index) => (
            <li key={index} className="row variable">
              <label>
                Name
                <input
                  value={row.name}
                  readOnly={!canEdit}
                  onChange={(e) => change(index, { name: e.target.value })}
                  pattern="[A-Za-z_][A-Za-z0-9_]*"
                />
              </label>
              <label>
                Value
                <input
                  type={row.revealed ? 'text' : 'password'}
                  value={row.value}
                  readOnly={!canEdit}
                  autoComplete="off"
                  onChange={(e) => change(index, { value: e.target.value })}
                />
              </label>
              <button
                type="button"
                className="ghost"
                aria-pressed={row.revealed}
                aria-label={`Reveal ${row.name || 'value'}`}
                onClick={() => change(index, { revealed: !row.revealed })}
              >
                Reveal
              </button>
              {canEdit ? (
                <button
                  type="button"
                  className="ghost"
                  aria-label={`Remove ${row.name || 'variable'}`}
                  onClick={() => {
                    setSaved(false);
                    setRows((current) => current.filter((_, i) => i !== index));
                  }}
                >
                  Remove
                </button>
              ) : null}
            </li>
          ))}
        </ul>
        {canEdit ? (
          <div className="form-row">
            <button
              type="button"
              onClick={() => setRows((current) => [...current, { name: '', value: '', revealed: true }])}
            >
              Add variable
            </button>
            <button type="submit" className="primary" disabled={mutation.isPending}>
              Save variables
            </button>
          </div>
        ) : null}
      </form>
      {errorAlert ? errorAlert(mutation.error) : <ProblemAlert error={mutation.error} />}
      {saved ? (
        <p className="notice" role="status">
          {savedText}
        </p>
      ) : null}
    </section>
  );
}
