// The fields of a loan's terms that a new loan and a proposal share: its tranches (each its
// tokens, its strike, a fixed price or a premium in percent over a TWAP, and its expiry, a
// day or days after the loan starts; added and removed), and its cost (retainer, interest).
import { STRIKE_BASES, type StrikeBasis } from '../../../../domain/loans/loan.ts';
import { Field, messagesOf } from '../../ui/field';

/** A tranche's problems by the form's fields: its tokens, its strike, its expiry. */
export interface TrancheErrors {
  quantity?: string[];
  strike?: string[];
  expiry?: string[];
}

/**
 * The API's words on `tranches` (specification part 7): a list of messages for the list as a
 * whole, or one object per tranche, each by the API's field names, taken to the form's.
 */
export function trancheErrorsOf(v: unknown): { list: string[]; rows: TrancheErrors[] } {
  if (!Array.isArray(v) || v.every((x) => typeof x === 'string')) return { list: messagesOf(v), rows: [] };
  return {
    list: [],
    rows: v.map((item) => {
      const o = item && typeof item === 'object' ? (item as Record<string, unknown>) : {};
      const strike = [...messagesOf(o.strike_basis), ...messagesOf(o.strike_price), ...messagesOf(o.premium_pct)];
      const expiry = [...messagesOf(o.expires_at), ...messagesOf(o.expires_after_days), ...messagesOf(o.disbursed_at)];
      return { quantity: messagesOf(o.quantity), strike, expiry };
    }),
  };
}

export interface TrancheRow {
  quantity: string;
  basis: StrikeBasis;
  /** The strike price (fixed) or the premium in percent (twap_premium). */
  strike: string;
  /** A date input's day, or a number of days. */
  expiry: string;
  /** A saved tranche's disbursement, when not the loan's start: sent back as it was. */
  disbursed?: string;
}

/** A tranche's strike as the API takes it. */
export const strikeOf = (t: TrancheRow) => (t.basis === 'fixed' ? { strike_price: Number(t.strike) } : { premium_pct: Number(t.strike) });

export function TrancheRows({ rows, onChange, expiry, twap, blank, errors }: { rows: TrancheRow[]; onChange: (rows: TrancheRow[]) => void; expiry: 'day' | 'days'; twap: string; blank: TrancheRow; errors?: { list: string[]; rows: TrancheErrors[] } }) {
  const set = (i: number, change: Partial<TrancheRow>) => onChange(rows.map((t, j) => (j === i ? { ...t, ...change } : t)));
  return (
    <fieldset aria-invalid={errors?.list.length ? true : undefined}>
      <legend>Tranches</legend>
      {errors?.list.length ? <p className="error field-error" role="alert">{errors.list.join(' ')}</p> : null}
      {rows.map((t, i) => (
        <div key={i} className="requirement" role="group" aria-label={`Tranche ${i + 1}`}>
          <Field label="Tokens" errors={errors?.rows[i]?.quantity}>
            {(a) => <input {...a} type="number" min="0" step="any" required value={t.quantity} onChange={(e) => set(i, { quantity: e.target.value })} />}
          </Field>
          <Field label="Strike">
            {(a) => (
              <select {...a} value={t.basis} onChange={(e) => set(i, { basis: e.target.value as StrikeBasis })}>
                {STRIKE_BASES.map((b) => <option key={b} value={b}>{b === 'fixed' ? 'fixed price (USD)' : `premium over ${twap} (%)`}</option>)}
              </select>
            )}
          </Field>
          <Field label={t.basis === 'fixed' ? 'Strike price (USD)' : 'Premium (%)'} errors={errors?.rows[i]?.strike}>
            {(a) => <input {...a} type="number" step="any" required value={t.strike} onChange={(e) => set(i, { strike: e.target.value })} />}
          </Field>
          {expiry === 'day' ? (
            <Field label="Expires (UTC day)" errors={errors?.rows[i]?.expiry}>
              {(a) => <input {...a} type="date" required value={t.expiry} onChange={(e) => set(i, { expiry: e.target.value })} />}
            </Field>
          ) : (
            <Field label="Expires after (days)" errors={errors?.rows[i]?.expiry}>
              {(a) => <input {...a} type="number" min="1" max="3650" step="1" required value={t.expiry} onChange={(e) => set(i, { expiry: e.target.value })} />}
            </Field>
          )}
          {rows.length > 1 && <button type="button" className="secondary" onClick={() => onChange(rows.filter((_, j) => j !== i))}>Remove tranche {i + 1}</button>}
        </div>
      ))}
      <button type="button" className="secondary" onClick={() => onChange([...rows, blank])}>Add a tranche</button>
    </fieldset>
  );
}

/** The loan's cost beside its tranches: a monthly retainer and a yearly interest rate. */
export function CostFields({ retainer, onRetainer, interest, onInterest, errors }: { retainer: string; onRetainer: (v: string) => void; interest: string; onInterest: (v: string) => void; errors?: { retainer?: string[]; interest?: string[] } }) {
  return (
    <>
      <Field label="Retainer (USD a month)" errors={errors?.retainer}>
        {(a) => <input {...a} type="number" min="0" step="any" value={retainer} onChange={(e) => onRetainer(e.target.value)} />}
      </Field>
      <Field label="Interest rate (% a year)" errors={errors?.interest}>
        {(a) => <input {...a} type="number" min="0" step="any" value={interest} onChange={(e) => onInterest(e.target.value)} />}
      </Field>
    </>
  );
}
