interface ConfirmQuestionProps {
  /** The group's accessible name ("Confirm stop"). */
  label: string;
  /** The question, with its consequence ("Stop shop? It stops answering until …"). */
  question: string;
  /** The confirm button's text ("Stop service"). */
  confirm: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

/**
 * Asks before an action that cannot be taken back, where it was clicked: the question, a focused
 * confirm button and Cancel. For what others depend on by name, TypeToConfirm asks harder.
 */
export function ConfirmQuestion({
  label,
  question,
  confirm,
  busy,
  onConfirm,
  onCancel,
}: ConfirmQuestionProps) {
  return (
    <div className="confirm" role="group" aria-label={label}>
      <p>{question}</p>
      <button type="button" className="danger" autoFocus disabled={busy} onClick={onConfirm}>
        {confirm}
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}
