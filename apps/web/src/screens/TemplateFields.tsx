import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client.ts';
import { must } from '@hostctl/api-client';
import { ListState } from '../components/feedback.tsx';

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
          {chosen.variables.map((variable) => (
            <div key={variable.name} className="field">
              <label>
                {variable.name}
                {variable.required && !variable.generated ? ' (required)' : ''}
                <input
                  value={values[variable.name] ?? ''}
                  onChange={(e) => onValue(variable.name, e.target.value)}
                  required={variable.required && !variable.generated && variable.default === undefined}
                  placeholder={variable.default ?? (variable.generated ? 'generated when left empty' : '')}
                  {...(variable.pattern ? { pattern: variable.pattern } : {})}
                  autoComplete="off"
                  aria-describedby={`hint-${variable.name}`}
                />
              </label>
              {/* Outside the label: a hint inside it would become part of the field's name. */}
              <p id={`hint-${variable.name}`} className="hint">
                {variable.description}
              </p>
            </div>
          ))}
        </fieldset>
      ) : null}
    </ListState>
  );
}
