// What changed from one version of a record to the next (an RFQ's versions, a proposal's
// revisions), read from the API's `.../versions/` answers, oldest first: each field whose
// value differs, by its path (`loan.tranches[0].strike_price`), with the value before and
// after. Bookkeeping that changes with every version (the number itself, the history, the
// time stamps) is left out; the status is kept, as every status change is a version too.
import type { ReactNode } from 'react';
import { fmtTime } from '../../ui/format';

const BOOKKEEPING = new Set(['version', 'history', 'updated_at', 'created_at']);

export interface Change {
  field: string;
  before: string;
  after: string;
}

/** A value as shown: lists of plain values joined, empty as "none". */
function shown(v: unknown): string {
  if (v === null || v === undefined || v === '') return 'none';
  if (Array.isArray(v)) return v.length === 0 ? 'none' : v.map(shown).join(', ');
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return String(v);
}

const plain = (v: unknown) => v === null || typeof v !== 'object' || (Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object'));

/** Every leaf of a record by path; a list of plain values is one leaf, a list of objects one per item. */
function leaves(v: unknown, at: string, out: Map<string, unknown>): Map<string, unknown> {
  if (plain(v)) out.set(at, v);
  else if (Array.isArray(v)) v.forEach((x, i) => leaves(x, `${at}[${i}]`, out));
  else for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (!(at === '' && BOOKKEEPING.has(k))) leaves(x, at ? `${at}.${k}` : k, out);
  return out;
}

/** The fields that differ from `a` to `b`, in `b`'s order (then those `b` no longer has). */
export function changesBetween(a: object, b: object): Change[] {
  const before = leaves(a, '', new Map());
  const after = leaves(b, '', new Map());
  const fields = [...after.keys(), ...[...before.keys()].filter((k) => !after.has(k))];
  return fields.map((field) => ({ field, before: shown(before.get(field)), after: shown(after.get(field)) })).filter((c) => c.before !== c.after);
}

/** Versions oldest first, each with what changed from the one before. */
export function VersionHistory<T extends { version: number; status: string }>({ label, versions, when }: { label: string; versions: T[]; when: (v: T, before: T | undefined) => string | undefined }) {
  if (versions.length === 0) return <p className="muted">No versions.</p>;
  return (
    <ol className="versions" aria-label={label}>
      {versions.map((v, i) => {
        const changes = i === 0 ? [] : changesBetween(versions[i - 1]!, v);
        let body: ReactNode;
        if (i === 0) body = <span className="muted">first version ({v.status})</span>;
        else if (changes.length === 0) body = <span className="muted">no change to its fields</span>;
        else
          body = (
            <ul aria-label={`Changes in version ${v.version}`}>
              {changes.map((c) => (
                <li key={c.field}>
                  <code>{c.field}</code>: {c.before} → {c.after}
                </li>
              ))}
            </ul>
          );
        const at = when(v, versions[i - 1]);
        return (
          <li key={v.version}>
            <strong>Version {v.version}</strong>
            {at ? <span className="muted"> · {fmtTime(at)} UTC</span> : null}
            {': '}
            {body}
          </li>
        );
      })}
    </ol>
  );
}
