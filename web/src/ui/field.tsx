// A form control with its label and the API's words for its field, read with it by a screen
// reader (aria-invalid, aria-describedby); and an error answer split by the fields it names.
import { useId, type ReactNode } from 'react';
import { ApiError, apiWords } from '../api/client';

export type FieldA11y = { id: string; 'aria-invalid'?: true; 'aria-describedby'?: string };

export function Field({ label, errors, children, check }: { label: string; errors?: string[]; check?: boolean; children: (a11y: FieldA11y) => ReactNode }) {
  const id = useId();
  const a11y = { id, ...(errors?.length ? { 'aria-invalid': true as const, 'aria-describedby': `${id}-error` } : {}) };
  const text = <label htmlFor={id}>{label}</label>;
  return (
    <div className={check ? 'field check' : 'field'}>
      {check ? <>{children(a11y)}{text}</> : <>{text}{children(a11y)}</>}
      {errors?.length ? <p id={`${id}-error`} className="error field-error">{errors.join(' ')}</p> : null}
    </div>
  );
}

/** The messages of a field of an error body: a list of texts, or one text. */
export const messagesOf = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : []);

/**
 * An error answer of a form's request, by the body's fields (specification part 7: `{field:
 * [messages]}`, a list of per-item objects for a list's items); what names no field the form
 * shows (or no field at all) is `general`, in the API's words.
 */
export function errorFields(e: unknown, shown: readonly string[]): { fields: Record<string, unknown>; general: string | null } {
  if (!(e instanceof ApiError)) return { fields: {}, general: e instanceof Error ? e.message : e ? String(e) : null };
  const body = e.body && typeof e.body === 'object' && !Array.isArray(e.body) ? (e.body as Record<string, unknown>) : {};
  const fields = Object.fromEntries(Object.entries(body).filter(([k]) => shown.includes(k)));
  const rest = Object.fromEntries(Object.entries(body).filter(([k]) => !shown.includes(k)));
  const general = Object.keys(fields).length === 0 ? (apiWords(e.body) ?? e.message) : Object.keys(rest).length > 0 ? apiWords(rest) : null;
  return { fields, general };
}
