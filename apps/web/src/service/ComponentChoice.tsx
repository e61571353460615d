import type { FieldControlProps } from '../components/Field.tsx';

interface Props {
  /** What the Field around it hands its control (id, hint and error wiring). */
  control: FieldControlProps;
  /** useComponents(): the current release's components; undefined while read, empty when unknown. */
  components: string[] | undefined;
  value: string;
  onChange: (component: string) => void;
  disabled?: boolean;
}

/**
 * The component a run or a terminal uses: one of the current release's, or the web component
 * (empty). When the components cannot be known, a name as typed, which the API checks.
 */
export function ComponentChoice({ control, components, value, onChange, disabled = false }: Props) {
  if (components !== undefined && components.length === 0)
    return (
      <input
        {...control}
        value={value}
        disabled={disabled}
        placeholder="empty: the web component"
        onChange={(e) => onChange(e.target.value)}
      />
    );
  return (
    <select {...control} value={value} disabled={disabled} onChange={(e) => onChange(e.target.value)}>
      <option value="">the web component (default)</option>
      {(components ?? []).map((name) => (
        <option key={name} value={name}>
          {name}
        </option>
      ))}
    </select>
  );
}
