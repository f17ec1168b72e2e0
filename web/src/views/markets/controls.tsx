import { useId } from 'react';
import { AMOUNTS, DAY_NAMES, INTERVALS, LEVELS, LOOKBACKS, SESSIONS, type MarketParams } from './params';
import { INTERVAL_NAMES } from '../../ui/choices';

const ZONES: string[] = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : ['UTC', 'America/New_York', 'Europe/London', 'Asia/Singapore'];

type Set = (changes: Record<string, string | null>) => void;

/** The parameters of the Markets view, each as the endpoints take it. */
export function MarketControls({ p, assets, exchanges, set }: { p: MarketParams; assets: string[]; exchanges: { slug: string; name: string }[]; set: Set }) {
  const daysId = useId();
  const shown = new Set(p.exchanges.length ? p.exchanges : exchanges.map((e) => e.slug));
  const toggleExchange = (slug: string) => {
    const next = new Set(shown);
    if (next.has(slug)) next.delete(slug);
    else next.add(slug);
    const all = exchanges.every((e) => next.has(e.slug));
    set({ exchanges: all ? null : [...next].join(',') || null });
  };
  const toggleDay = (d: string) => {
    const next = p.days.includes(d) ? p.days.filter((x) => x !== d) : [...p.days, d];
    set({ days: next.join(',') });
  };
  return (
    <form className="controls" aria-label="Market parameters" onSubmit={(e) => e.preventDefault()}>
      <label>
        Asset
        <select value={p.asset} onChange={(e) => set({ asset: e.target.value, exchanges: null })}>
          {assets.map((a) => (
            <option key={a}>{a}</option>
          ))}
        </select>
      </label>
      <label>
        Window
        <select
          value={p.mode === 'lookback' ? p.lookback : p.mode}
          onChange={(e) => {
            const v = e.target.value;
            if (v === 'range') set({ start: new Date(Date.now() - 86_400_000).toISOString().slice(0, 16), end: null, session: null, lookback: null });
            else if (v === 'session') set({ session: 'market-hours', start: null, end: null, lookback: null });
            else set({ lookback: v, start: null, end: null, session: null });
          }}
        >
          {LOOKBACKS.map((l) => (
            <option key={l} value={l}>
              last {l.replace('-', ' ')}
            </option>
          ))}
          <option value="range">a range…</option>
          <option value="session">a trading session…</option>
        </select>
      </label>
      {p.mode === 'range' && (
        <>
          <label>
            From (UTC)
            <input type="datetime-local" value={p.start.slice(0, 16)} onChange={(e) => set({ start: e.target.value })} required />
          </label>
          <label>
            To (UTC, empty: now)
            <input type="datetime-local" value={p.end.slice(0, 16)} onChange={(e) => set({ end: e.target.value || null })} />
          </label>
        </>
      )}
      {p.mode === 'session' && (
        <>
          <label>
            Session
            <select value={p.session} onChange={(e) => set({ session: e.target.value })}>
              {SESSIONS.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </label>
          <fieldset className="days" aria-describedby={daysId}>
            <legend>Days</legend>
            <span id={daysId} className="muted">weeks start on Sunday</span>
            {(['this', 'last'] as const).map((week) =>
              DAY_NAMES.map((name, day) => {
                const v = `${week}:${day}`;
                return (
                  <label key={v} className="check">
                    <input type="checkbox" checked={p.days.includes(v)} onChange={() => toggleDay(v)} />
                    {week} week {name.slice(0, 3)}
                  </label>
                );
              }),
            )}
          </fieldset>
        </>
      )}
      <label>
        Interval
        <select value={p.interval} onChange={(e) => set({ interval: e.target.value })}>
          {INTERVALS.map((i) => (
            <option key={i} value={i}>
              {INTERVAL_NAMES[i]}
            </option>
          ))}
        </select>
      </label>
      <label>
        Time zone
        <select value={p.zone} onChange={(e) => set({ tz: e.target.value || null })}>
          <option value="">UTC (default)</option>
          {ZONES.map((z) => (
            <option key={z}>{z}</option>
          ))}
        </select>
      </label>
      <label>
        Level (bps)
        <select value={String(p.level)} onChange={(e) => set({ bps: e.target.value })}>
          {LEVELS.map((l) => (
            <option key={l} value={String(l)}>
              {l}
            </option>
          ))}
        </select>
      </label>
      <label>
        Depth uptime amount (USD)
        <select value={String(p.amount)} onChange={(e) => set({ amount: e.target.value })}>
          {AMOUNTS.map((a) => (
            <option key={a} value={String(a)}>
              {a.toLocaleString('en-US')}
            </option>
          ))}
        </select>
      </label>
      {exchanges.length > 0 && (
        <fieldset className="exchanges">
          <legend>Exchanges</legend>
          {exchanges.map((e) => (
            <label key={e.slug} className="check">
              <input type="checkbox" checked={shown.has(e.slug)} onChange={() => toggleExchange(e.slug)} />
              {e.name}
            </label>
          ))}
        </fieldset>
      )}
    </form>
  );
}
