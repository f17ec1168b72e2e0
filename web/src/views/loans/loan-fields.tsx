// The fields of a loan's terms that a new loan and a proposal share: its tranches (each its
// tokens, its strike, a fixed price or a premium in percent over a TWAP, and its expiry, a
// day or days after the loan starts; added and removed), and its cost (retainer, interest).
import { STRIKE_BASES, type StrikeBasis } from '../../../../domain/loans/loan.ts';

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

export function TrancheRows({ rows, onChange, expiry, twap, blank }: { rows: TrancheRow[]; onChange: (rows: TrancheRow[]) => void; expiry: 'day' | 'days'; twap: string; blank: TrancheRow }) {
  const set = (i: number, change: Partial<TrancheRow>) => onChange(rows.map((t, j) => (j === i ? { ...t, ...change } : t)));
  return (
    <fieldset>
      <legend>Tranches</legend>
      {rows.map((t, i) => (
        <div key={i} className="requirement" role="group" aria-label={`Tranche ${i + 1}`}>
          <label>
            Tokens
            <input type="number" min="0" step="any" required value={t.quantity} onChange={(e) => set(i, { quantity: e.target.value })} />
          </label>
          <label>
            Strike
            <select value={t.basis} onChange={(e) => set(i, { basis: e.target.value as StrikeBasis })}>
              {STRIKE_BASES.map((b) => <option key={b} value={b}>{b === 'fixed' ? 'fixed price (USD)' : `premium over ${twap} (%)`}</option>)}
            </select>
          </label>
          <label>
            {t.basis === 'fixed' ? 'Strike price (USD)' : 'Premium (%)'}
            <input type="number" step="any" required value={t.strike} onChange={(e) => set(i, { strike: e.target.value })} />
          </label>
          {expiry === 'day' ? (
            <label>
              Expires (UTC day)
              <input type="date" required value={t.expiry} onChange={(e) => set(i, { expiry: e.target.value })} />
            </label>
          ) : (
            <label>
              Expires after (days)
              <input type="number" min="1" max="3650" step="1" required value={t.expiry} onChange={(e) => set(i, { expiry: e.target.value })} />
            </label>
          )}
          {rows.length > 1 && <button type="button" className="secondary" onClick={() => onChange(rows.filter((_, j) => j !== i))}>Remove tranche {i + 1}</button>}
        </div>
      ))}
      <button type="button" className="secondary" onClick={() => onChange([...rows, blank])}>Add a tranche</button>
    </fieldset>
  );
}

/** The loan's cost beside its tranches: a monthly retainer and a yearly interest rate. */
export function CostFields({ retainer, onRetainer, interest, onInterest }: { retainer: string; onRetainer: (v: string) => void; interest: string; onInterest: (v: string) => void }) {
  return (
    <>
      <label>
        Retainer (USD a month)
        <input type="number" min="0" step="any" value={retainer} onChange={(e) => onRetainer(e.target.value)} />
      </label>
      <label>
        Interest rate (% a year)
        <input type="number" min="0" step="any" value={interest} onChange={(e) => onInterest(e.target.value)} />
      </label>
    </>
  );
}
