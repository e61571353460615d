import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client.ts';
import { must, type Service } from '@hostctl/api-client';
import { ProblemAlert } from '../components/feedback.tsx';
import { invalidateService } from './actions.ts';

interface Row {
  name: string;
  value: string;
  revealed: boolean;
}

const toRows = (variables: Record<string, string>): Row[] =>
  Object.entries(variables).map(([name, value]) => ({ name, value, revealed: false }));

/**
 * The service's variables, values masked until revealed one by one. Saving sends only the
 * changes: new or changed values, and null for removed names (the API merges).
 */
export function VariablesEditor({ service, canEdit }: { service: Service; canEdit: boolean }) {
  const queries = useQueryClient();
  const [rows, setRows] = useState<Row[]>(() => toRows(service.variables));
  const [saved, setSaved] = useState(false);
  const save = useMutation({
    mutationFn: () => {
      const changes: Record<string, string | null> = {};
      const kept = new Set(rows.map((row) => row.name));
      for (const name of Object.keys(service.variables)) if (!kept.has(name)) changes[name] = null;
      for (const row of rows)
        if (row.name && service.variables[row.name] !== row.value) changes[row.name] = row.value;
      return must(
        api.PATCH('/api/services/{id}', {
          params: { path: { id: service.id } },
          body: { variables: changes },
        }),
      );
    },
    onSuccess: (updated) => {
      setRows(toRows(updated.variables));
      setSaved(true);
    },
    onSettled: () => invalidateService(queries, service.id),
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
          save.mutate();
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
            <button type="submit" className="primary" disabled={save.isPending}>
              Save variables
            </button>
          </div>
        ) : null}
      </form>
      <ProblemAlert error={save.error} />
      {saved ? (
        <p className="notice" role="status">
          Variables saved; a redeploy applying them has been queued.
        </p>
      ) : null}
    </section>
  );
}
