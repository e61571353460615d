import { useMutation } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { GROUP_NAME_PATTERN, type VariableGroup } from './group-api.ts';

/**
 * Renames the group (PATCH with If-Match, like every edit on its page): a name another group of the
 * customer has is the API's 409, a group changed meanwhile its 412 (`errorAlert` offers the reload).
 * Services refer to groups by id, so nothing else changes.
 */
export function RenameGroup(props: {
  group: VariableGroup;
  save: (name: string) => Promise<VariableGroup>;
  onSettled: () => Promise<void>;
  errorAlert: (error: unknown) => ReactNode;
}) {
  const [name, setName] = useState(props.group.name);
  const rename = useMutation({
    mutationFn: () => props.save(name.trim()),
    onSettled: props.onSettled,
  });
  return (
    <section className="card" aria-labelledby="rename-group-heading">
      <h2 id="rename-group-heading">Rename</h2>
      <form
        className="form-row"
        onSubmit={(event) => {
          event.preventDefault();
          rename.mutate();
        }}
      >
        <label>
          Group name
          <input
            required
            minLength={3}
            maxLength={63}
            pattern={GROUP_NAME_PATTERN}
            value={name}
            aria-describedby="rename-group-hint"
            onChange={(e) => setName(e.target.value)}
          />
        </label>
        <button type="submit" disabled={rename.isPending || name.trim() === props.group.name}>
          Rename group
        </button>
      </form>
      <p id="rename-group-hint" className="hint">
        Lowercase letters, digits and dashes, 3 to 63 characters; unique among the customer&apos;s groups.
      </p>
      {rename.isSuccess ? (
        <p className="notice" role="status">
          Renamed to {rename.data.name}.
        </p>
      ) : null}
      {rename.error ? props.errorAlert(rename.error) : null}
    </section>
  );
}
