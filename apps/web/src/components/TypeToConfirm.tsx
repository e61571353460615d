import { useState } from 'react';

interface TypeToConfirmProps {
  /** What is deleted, as the label says it ("service", "group"). */
  noun: string;
  /** The name to type. */
  name: string;
  /** The button's text ("Delete service"). */
  action: string;
  busy: boolean;
  onConfirm: () => void;
}

/** Deleting needs the name typed in: one misclick must not remove what others depend on. */
export function TypeToConfirm({ noun, name, action, busy, onConfirm }: TypeToConfirmProps) {
  const [typed, setTyped] = useState('');
  return (
    <form
      className="form-row"
      onSubmit={(event) => {
        event.preventDefault();
        if (typed === name) onConfirm();
      }}
    >
      <label>
        Type the {noun} name ({name}) to confirm
        <input value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
      </label>
      <button type="submit" className="danger" disabled={typed !== name || busy}>
        {action}
      </button>
    </form>
  );
}
