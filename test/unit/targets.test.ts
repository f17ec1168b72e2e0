// Pure rules of targets (addendum section 6): the status machine, the session windows, the
// date of a change, threshold scaling, and a target's value from a window's aggregates.
import { expect } from 'chai';
import { LEVELS_BPS, levelName } from '../../domain/market/facts.ts';
import type { Target } from '../../domain/targets/repository.ts';
import { scaledThreshold, scaling } from '../../domain/targets/scaling.ts';
import { changeDate, isMet, nextStanding } from '../../domain/targets/status.ts';
import { gbValue, mmValue, type BookWindow, type TradeWindow } from '../../domain/targets/values.ts';
import { windowOf } from '../../domain/targets/window.ts';
import { TARGET_SESSIONS, targetSessionHours } from '../../domain/targets/facts.ts';

describe('target status machine and session windows', () => {
  it('moves unchecked -> stable or alert, alert -> recovering -> stable after 3 met, recovering -> alert, and ignores no value', () => {
    let s = nextStanding({ status: 'unchecked', streak: 0 }, true);
    expect(s.status).to.equal('stable');
    expect(nextStanding({ status: 'unchecked', streak: 0 }, false).status).to.equal('alert');
    s = nextStanding(s, false);
    expect(s.status).to.equal('alert');
    s = nextStanding(s, true);
    expect(s).to.deep.equal({ status: 'recovering', streak: 1 });
    expect(nextStanding(s, false).status).to.equal('alert');
    s = nextStanding(nextStanding(s, true), true);
    expect(s.status).to.equal('stable');
    expect(nextStanding(s, null)).to.equal(s);
  });

  it('limits a session target to the part of the trailing hour inside its session (New York time)', () => {
    // Wednesday 2026-06-24 10:00 EDT = 14:00 UTC: market hours began at 09:30.
    const t = Date.UTC(2026, 5, 24, 14, 0);
    expect(windowOf(null, t)).to.deep.equal([[t - 3_600_000, t]]);
    expect(windowOf('market-hours', t)).to.deep.equal([[Date.UTC(2026, 5, 24, 13, 30), t]]);
    expect(windowOf('pre-market', t)).to.deep.equal([[t - 3_600_000, Date.UTC(2026, 5, 24, 13, 30)]]);
    expect(windowOf('weekend-hours', t)).to.deep.equal([]);
    // 21:00 EDT: the overnight (blue-ocean) session.
    const night = Date.UTC(2026, 5, 25, 1, 0);
    expect(windowOf('overnight', night)).to.deep.equal([[night - 3_600_000, night]]);
  });

  it('describes each session with the hours it is evaluated over (addendum section 5)', () => {
    const hours = targetSessionHours();
    expect(hours.timezone).to.equal('America/New_York');
    expect(Object.keys(hours.sessions)).to.have.members([...TARGET_SESSIONS]);
    expect(hours.sessions['market-hours']).to.deep.equal({ days: 'Monday-Friday', start: '09:30', end: '16:00' });
    expect(hours.sessions.overnight).to.deep.equal({ days: 'Monday-Friday', start: '20:00', end: '04:00 (next day)' });
    expect(hours.sessions['weekend-hours']).to.deep.equal({ days: 'Saturday-Sunday', start: '00:00', end: '24:00' });
    // Each weekday session, on Wednesday 2026-06-24 (EDT, UTC-4): half an hour after its
    // described start, the window starts at that start; half an hour after its end, ends there.
    const edt = (hhmm: string, nextDay = false) => {
      const [h, m] = hhmm.split(':').map(Number) as [number, number];
      return Date.UTC(2026, 5, nextDay ? 25 : 24, h + 4, m);
    };
    for (const session of TARGET_SESSIONS.filter((s) => s !== 'weekend-hours')) {
      const { start, end } = hours.sessions[session];
      const from = edt(start);
      const to = edt(end.slice(0, 5), end.endsWith('(next day)'));
      expect(windowOf(session, from + 1_800_000)[0]![0], `${session} start`).to.equal(from);
      const last = windowOf(session, to + 1_800_000).at(-1)!;
      expect(last[1], `${session} end`).to.equal(to);
    }
  });

  it('dates a status change when it was decided, never before the creation nor before the change it follows', () => {
    const created = Date.UTC(2026, 5, 24, 22, 32, 10);
    expect(changeDate(created + 5_000, created, [{ updated_at: created }])).to.equal(created + 5_000);
    // A clock behind the one that made the target (or the evaluated minute's own time).
    expect(changeDate(Date.UTC(2026, 5, 24, 22, 30), created, [{ updated_at: created }])).to.equal(created);
    expect(changeDate(created + 1_000, created, [{ updated_at: created }, { updated_at: created + 9_000 }])).to.equal(created + 9_000);
    expect(changeDate(created - 1, created, [])).to.equal(created);
  });

  it('scales the threshold by current / reference price in price mode', () => {
    const t = { threshold: 100, scaling_enabled: true, scaling_mode: 'price', scaling_source: 'asset_twap_24h', scaling_reference_price: 50, asset: 'X', current_price: null } as unknown as Target;
    expect(scaling(t, new Map([['X', 75]]))).to.deep.equal({ effective_threshold: 150, current_price: 75, scaling_factor: 1.5 });
    expect(scaling({ ...t, scaling_mode: 'legacy' }, new Map([['X', 75]])).effective_threshold).to.equal(100);
    expect(scaling({ ...t, scaling_source: 'manual' }, new Map()).scaling_factor).to.equal(1);
  });
});


describe('target values from window aggregates', () => {
  const book = (over: Partial<BookWindow> = {}): BookWindow => ({
    minutes: 4,
    mid_sum: 400,
    spread_abs_sum: 2,
    spread_bps_sum: 20,
    last_top: [0, 99.5, 3, 100.5, 4],
    depth_minutes: 2,
    bid_depth_sum: LEVELS_BPS.map(() => 1_000),
    ask_depth_sum: LEVELS_BPS.map(() => 3_000),
    bid_count_sum: LEVELS_BPS.map(() => 8),
    ask_count_sum: LEVELS_BPS.map(() => 12),
    spread_up: LEVELS_BPS.map(() => 3),
    depth_up: [],
    slip_buy_sum: [],
    slip_buy_n: [],
    slip_sell_sum: [],
    slip_sell_n: [],
    ...over,
  });
  const trades: TradeWindow = { trades: 3, amount: 2, notional: 210, volume_usd: 420, usd_trades: 3 };

  it('gives the market values as the market endpoints do: means over minutes with data, depth over minutes with a USD rate', () => {
    expect(gbValue('volume/twap', book(), trades)).to.equal(100);
    expect(gbValue('volume/vwap', book(), trades)).to.equal(105);
    expect(gbValue('spread/spread_bps', book(), trades)).to.equal(5);
    expect(gbValue(`depth/bid_${levelName(10)}bps`, book(), trades)).to.equal(500);
    expect(gbValue(`depth/n_ask_${levelName(10)}bps`, book(), trades)).to.equal(3);
    expect(gbValue(`uptime/spread/${levelName(10)}bps`, book(), trades)).to.equal(75);
    expect(gbValue('top_of_book/ask_amount', book(), trades)).to.equal(4);
    expect(gbValue('volume/twap', undefined, trades)).to.equal(null);
  });

  it('counts a window without a trade row as volume 0, and volume without any USD rate as unknown', () => {
    expect(gbValue('volume/volume', book(), undefined)).to.equal(0);
    expect(gbValue('volume/volume', undefined, undefined)).to.equal(0);
    expect(gbValue('volume/volume', book(), trades)).to.equal(420);
    expect(gbValue('volume/volume', book(), { ...trades, usd_trades: 0 })).to.equal(null);
    // A volume target is then judged: above a threshold it is not met.
    expect(isMet(gbValue('volume/volume', undefined, undefined)!, 1, 'above')).to.equal(false);
  });

  it("gives a market maker's values and their coverage of the whole market, at most 100", () => {
    const own = { volume: 84, bid: LEVELS_BPS.map(() => 250), ask: LEVELS_BPS.map(() => 3_000) };
    expect(mmValue('volume/volume', own, book(), trades)).to.equal(84);
    expect(mmValue('coverage/volume/volume_coverage', own, book(), trades)).to.equal(20);
    expect(mmValue(`coverage/depth/bid_${levelName(10)}bps_coverage`, own, book(), trades)).to.equal(50);
    expect(mmValue(`coverage/depth/ask_${levelName(10)}bps_coverage`, own, book(), trades)).to.equal(100);
    // No market volume: no coverage (not a division by 0).
    expect(mmValue('coverage/volume/volume_coverage', own, book(), undefined)).to.equal(null);
    expect(mmValue(`depth/bid_${levelName(10)}bps`, undefined, book(), trades)).to.equal(null);
    expect(mmValue('spread/spread_bps', own, book(), trades)).to.equal(null);
  });

  it('shows a threshold under a factor as scaling computes it', () => {
    const t = { threshold: 40, scaling_enabled: true, scaling_mode: 'price', scaling_source: 'asset_twap_24h', scaling_reference_price: 8, asset: 'X' } as unknown as Target;
    const s = scaling(t, new Map([['X', 10]]));
    expect(scaledThreshold(t.threshold, s.scaling_factor)).to.equal(s.effective_threshold);
    // Without a price yet, the threshold as it is.
    expect(scaling(t, new Map())).to.deep.equal({ effective_threshold: 40, current_price: null, scaling_factor: 1 });
  });
});
