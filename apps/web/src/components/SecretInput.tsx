import { useState, type InputHTMLAttributes } from 'react';

interface SecretInputProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'type' | 'id'> {
  /** The input's id: its label points at it, and the toggle names what it controls. */
  id: string;
  /** What the toggle's name says it shows ("Show POSTGRES_PASSWORD"). */
  label: string;
}

/**
 * A password or key the user types: masked while typed (a shoulder or a screen share sees dots),
 * with a toggle to check what was typed. The toggle's name stays the same and `aria-pressed` says
 * whether the value is shown, so a screen reader announces the state rather than a renamed button.
 */
export function SecretInput({ id, label, ...input }: SecretInputProps) {
  const [isShown, setShown] = useState(false);
  return (
    <span className="secret-input">
      <input
        {...input}
        id={id}
        type={isShown ? 'text' : 'password'}
        // new-password: a browser must not fill the user's own saved password into a service's.
        autoComplete="new-password"
        spellCheck={false}
      />
      <button
        type="button"
        className="ghost"
        aria-pressed={isShown}
        aria-controls={id}
        aria-label={`Show ${label}`}
        onClick={() => setShown((shown) => !shown)}
      >
        Show
      </button>
    </span>
  );
}
