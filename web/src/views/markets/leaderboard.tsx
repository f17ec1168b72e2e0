// The leaderboard (POST/GET /v2/leaderboard/): pairs ranked by the API, sorted and paged by
// it (20 rows a page), over the caller's assets and the chosen exchanges and window.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useSearchParams } from '../../router';
import { pick } from '../../ui/choices';
import { api, col, unwrap, type QueryOf, type Schemas } from '../../api/client';
import { CsvButton } from '../../ui/csv-button';
import { fmtNum, fmtPct, fmtUsd } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { Table, type Column, type Sort } from '../../ui/table';
import { windowQuery, type MarketParams } from './params';

type MarketType = NonNullable<QueryOf<'/v2/leaderboard/'>['market_type']>;
const MARKET_TYPES: readonly MarketType[] = ['all', 'spot', 'perp'];
type Row = Schemas['LeaderboardRow'];

export function Leaderboard({ p, exchanges }: { p: MarketParams; exchanges: string[] }) {
  // Sort, market type and page in the address, as the view's other choices: kept on reload.
  const [q, set] = useSearchParams();
  const sort: Sort = { key: q.get('lb_sort') || 'volume', direction: q.get('lb_dir') === 'asc' ? 'asc' : 'desc' };
  const page = Math.max(1, Math.floor(Number(q.get('lb_page')) || 1));
  const marketType = pick(MARKET_TYPES, q.get('lb_type'), 'all');
  const setPage = (n: number) => set({ lb_page: n === 1 ? null : String(n) });
  const setSort = (s: Sort) => set({ lb_sort: s.key === 'volume' ? null : s.key, lb_dir: s.direction === 'desc' ? null : s.direction, lb_page: null });
  const setMarketType = (t: MarketType) => set({ lb_type: t === 'all' ? null : t, lb_page: null });
  const bid = `bid_${p.level}bps`;
  const ask = `ask_${p.level}bps`;
  const query: QueryOf<'/v2/leaderboard/'> = {
    bps: [p.level],
    sort_by: sort.key,
    sort_direction: sort.direction,
    page,
    market_type: marketType,
    ...(exchanges.length ? { exchanges } : {}),
    ...windowQuery(p),
  };
  const board = useQuery({
    queryKey: ['leaderboard', query],
    queryFn: async () => unwrap(await api.GET('/v2/leaderboard/', { params: { query } })),
    placeholderData: keepPreviousData,
  });
  const columns: Column<Row>[] = [
    { key: 'pair', label: 'Pair', value: (r) => `${r.exchange} ${r.pair}`, sortable: false },
    { key: 'asset', label: 'Asset', value: (r) => r.asset, sortable: false },
    { key: 'volume', label: 'Volume', value: (r) => r.volume, render: (r) => fmtUsd(r.volume), numeric: true },
    { key: 'price_change', label: 'Price change', value: (r) => r.price_change, render: (r) => fmtPct(r.price_change), numeric: true },
    { key: bid, label: `Bid ${p.level} bps`, value: (r) => col(r, bid), render: (r) => fmtUsd(col(r, bid)), numeric: true },
    { key: ask, label: `Ask ${p.level} bps`, value: (r) => col(r, ask), render: (r) => fmtUsd(col(r, ask)), numeric: true },
    { key: 'tick_bps', label: 'Tick (bps)', value: (r) => r.tick_bps, render: (r) => fmtNum(r.tick_bps), numeric: true },
    { key: 'usd_open_interest', label: 'Open interest', value: (r) => r.usd_open_interest, render: (r) => fmtUsd(r.usd_open_interest), numeric: true },
    { key: 'funding_rate_8h', label: 'Funding 8h', value: (r) => r.funding_rate_8h, render: (r) => fmtNum(r.funding_rate_8h), numeric: true },
  ];
  return (
    <Panel
      title="Leaderboard"
      wide
      actions={
        <span className="actions">
          <label>
            Market type
            <select value={marketType} onChange={(e) => setMarketType(e.target.value as MarketType)}>
              <option value="all">spot and perpetual</option>
              <option value="spot">spot</option>
              <option value="perp">perpetual</option>
            </select>
          </label>
          <CsvButton label="Leaderboard" filename="leaderboard.csv" load={() => api.GET('/v2/leaderboard/', { params: { query: { ...query, type: 'csv', filename: 'leaderboard.csv' } }, parseAs: 'blob' })} />
        </span>
      }
    >
      <QueryState query={board}>
        {(rows) => (
          <>
            <Table caption="Pairs across exchanges, ranked by the service" columns={columns} rows={rows} rowKey={(r) => `${r.exchange} ${r.pair}`} sort={sort} onSort={setSort} />
            <nav className="pager" aria-label="Leaderboard pages">
              <button type="button" className="secondary" disabled={page === 1} onClick={() => setPage(page - 1)}>Previous page</button>
              <span>Page {page}</span>
              <button type="button" className="secondary" disabled={rows.length < 20} onClick={() => setPage(page + 1)}>Next page</button>
            </nav>
          </>
        )}
      </QueryState>
    </Panel>
  );
}
