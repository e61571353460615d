import { useRef } from 'react';
import { toProblem } from '@hostctl/api-client';
import { lineOfPath } from '../compose-lines.ts';

/**
 * A compose document editor. When the API's compose policy refuses the document, each error is
 * listed with the line it points at, and a button puts the cursor on that line.
 */
export function ComposeEditor(props: { value: string; onChange: (value: string) => void; problem: unknown }) {
  const { value, onChange, problem } = props;
  const area = useRef<HTMLTextAreaElement>(null);
  const refused = problem ? toProblem(problem) : null;
  const located =
    refused?.code === 'invalid_compose' || refused?.code === 'validation_failed'
      ? refused.errors.map((error) => ({ ...error, line: lineOfPath(value, error.path) }))
      : [];
  const lineCount = value.split('\n').length;

  const goTo = (line: number) => {
    const element = area.current;
    if (!element) return;
    const lines = value.split('\n');
    const start = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0);
    element.focus();
    element.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
  };

  return (
    <div className="compose-editor">
      <label>
        Compose file
        <textarea
          ref={area}
          className="code"
          required
          rows={Math.min(30, Math.max(10, lineCount + 1))}
          spellCheck={false}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          aria-invalid={located.length > 0}
          aria-describedby={located.length > 0 ? 'compose-errors' : undefined}
        />
      </label>
      {located.length > 0 ? (
        <ul id="compose-errors" className="compose-errors">
          {located.map((error, index) => (
            <li key={index}>
              {error.line ? (
                <button type="button" className="ghost" onClick={() => goTo(error.line!)}>
                  Line {error.line}
                </button>
              ) : null}{' '}
              <code>{error.path}</code>: {error.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
