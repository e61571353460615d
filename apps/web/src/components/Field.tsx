import type { ReactNode } from 'react';
import { toProblem } from '@hostctl/api-client';

/** The attributes a field's control takes so its hint and its error are read with it. */
export interface FieldControlProps {
  id: string;
  'aria-invalid': boolean;
  'aria-describedby': string | undefined;
}

interface FieldProps {
  /** Unique in the page: the control's id, and the prefix of its hint's and error's. */
  id: string;
  label: string;
  hint?: ReactNode;
  /** What the API said about this field (fieldErrors), shown under it and read with it. */
  error?: string | undefined;
  children: (control: FieldControlProps) => ReactNode;
}

/** A labelled form control with its hint and the API's message about it, next to it. */
export function Field({ id, label, hint, error, children }: FieldProps) {
  const described = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': Boolean(error), 'aria-describedby': described || undefined })}
      {hint ? (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p className="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/**
 * The fields an API problem names, by body field: `/body/cron` → `cron`, `/body/command/0` →
 * `command` (the first message wins). Errors about anything else stay in the problem's alert.
 */
export function fieldErrors(error: unknown): Map<string, string> {
  const found = new Map<string, string>();
  if (error === null || error === undefined) return found;
  for (const { path, message } of toProblem(error).errors) {
    const field = /^\/body\/([^/]+)/.exec(path)?.[1];
    if (field && !found.has(field)) found.set(field, message);
  }
  return found;
}
