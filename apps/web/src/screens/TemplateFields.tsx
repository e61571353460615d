import { useQuery } from '@tanstack/react-query';
import type { ChangeEvent } from 'react';
import { api } from '../api/client.ts';
import { must } from '@hostctl/api-client';
import { ListState } from '../components/feedback.tsx';
import { SecretInput } from '../components/SecretInput.tsx';

interface Props {
  templateId: string;
  onTemplate: (id: string) => void;
  values: Record<string, string>;
  onValue: (name: string, value: string) => void;
}

/** The catalog's templates and the chosen one's declared variables, with the catalog's rules. */
export function TemplateFields({ templateId, onTemplate, values, onValue }: Props) {
  const templates = useQuery({
    queryKey: ['templates'],
    queryFn: () => must(api.GET('/api/templates')),
    staleTime: 5 * 60_000,
  });
  const list = templates.data?.data ?? [];
  const chosen = list.find((template) => template.id === templateId);
  return (
    <ListState
      noun="templates"
      isPending={templates.isPending}
      error={templates.error}
      isEmpty={list.length === 0}
    >
      <label>
        Template
        <select required value={templateId} onChange={(e) => onTemplate(e.target.value)}>
          <option value="">Choose a template</option>
          {list.map((template) => (
            <option key={template.id} value={template.id}>
              {template.name} ({template.category})
            </option>
          ))}
        </select>
      </label>
      {chosen ? (
        <fieldset>
          <legend>{chosen.name} settings</legend>
          <p className="hint">{chosen.description}</p>
          {chosen.variables.length === 0 ? <p className="muted">This template has no settings.</p> : null}
          {chosen.variables.map((variable) => {
            const inputId = `variable-${variable.name}`;
            const input = {
              id: inputId,
              value: values[variable.name] ?? '',
              onChange: (e: ChangeEvent<HTMLInputElement>) => onValue(variable.name, e.target.value),
              required: variable.required && !variable.generated && variable.default === undefined,
              placeholder: variable.default ?? (variable.generated ? 'generated when left empty' : ''),
              ...(variable.pattern ? { pattern: variable.pattern } : {}),
              'aria-describedby': `hint-${variable.name}`,
            };
            return (
              <div key={variable.name} className="field">
                <label htmlFor={inputId}>
                  {variable.name}
                  {variable.required && !variable.generated ? ' (required)' : ''}
                </label>
                {/* A password or key the service keeps secret: masked like the secret it becomes. */}
                {variable.secret ? (
                  <SecretInput {...input} label={variable.name} />
                ) : (
                  <input {...input} autoComplete="off" />
                )}
                {/* Outside the label: a hint inside it would become part of the field's name. */}
                <p id={`hint-${variable.name}`} className="hint">
                  {variable.description}
                </p>
              </div>
            );
          })}
        </fieldset>
      ) : null}
    </ListState>
  );
}
