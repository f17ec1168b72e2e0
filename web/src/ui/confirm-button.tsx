// A button for what cannot be undone (cancel, recall, award, revoke...): the first press asks,
// in place, and only "Yes" does it. In the page, not a browser dialog: read by a screen
// reader as any other control, and reachable by keyboard.
import { useState, type ReactNode } from 'react';

export function ConfirmButton({ label, children, onConfirm, disabled, className = 'secondary' }: {
  /** The action in words ("Cancel the request"): the button's accessible name, and the question's. */
  label: string;
  /** What the button shows, when other than `label`. */
  children?: ReactNode;
  onConfirm: () => void;
  disabled?: boolean;
  className?: string;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className={className} aria-label={label} disabled={disabled} onClick={() => setAsking(true)}>
        {children ?? label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={`${label}?`}>
      <span>{label}? It cannot be undone.</span>
      <button type="button" className="danger" onClick={() => { setAsking(false); onConfirm(); }}>Yes, {label[0]!.toLowerCase() + label.slice(1)}</button>
      {/* Focus lands on the choice that changes nothing. */}
      <button type="button" className="secondary" autoFocus onClick={() => setAsking(false)}>No</button>
    </span>
  );
}
