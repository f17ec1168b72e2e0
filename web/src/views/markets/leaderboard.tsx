// The leaderboard (POST/GET /v2/leaderboard/): pairs ranked by the API, sorted and paged by
// it (20 rows a page), over the caller's assets and the chosen exchanges and window.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, num, rowsOf, str, unwrap, type Row } from '../../api/client';
import { CsvButton } from '../../ui/csv-button';
import { fmtNum, fmtPct, fmtUsd } from '../../ui/format';
import { Panel, QueryState } from '../../ui/query-state';
import { Table, type Column, type Sort } from '../../ui/table';
import { windowQuery, type MarketParams } from './params';

type MarketType = 'all' | 'spot' | 'perp';

export function Leaderboard({ p, exchanges }: { p: MarketParams; exchanges: string[] }) {
  const [sort, setSort] = useState<Sort>({ key: 'volume', direction: 'desc' });
  const [page, setPage] = useState(1);
  const [marketType, setMarketType] = useState<MarketType>('all');
  const bid = `bid_${p.level}bps`;
  const ask = `ask_${p.level}bps`;
  const query = {
    bps: String(p.level),
    sort_by: sort.key,
    sort_direction: sort.direction,
    page,
    market_type: marketType,
    ...(exchanges.length ? { exchanges: exchanges.join(',') } : {}),
    ...windowQuery(p),
  };
  const board = useQuery({
    queryKey: ['leaderboard', query],
    queryFn: async () => rowsOf(unwrap(await api.GET('/v2/leaderboard/', { params: { query } }))),
    placeholderData: keepPreviousData,
  });
  const columns: Column<Row>[] = [
    { key: 'pair', label: 'Pair', value: (r) => `${str(r, 'exchange')} ${str(r, 'pair')}`, sortable: false },
    { key: 'asset', label: 'Asset', value: (r) => str(r, 'asset'), sortable: false },
    { key: 'volume', label: 'Volume', value: (r) => num(r, 'volume'), render: (r) => fmtUsd(num(r, 'volume')), numeric: true },
    { key: 'price_change', label: 'Price change', value: (r) => num(r, 'price_change'), render: (r) => fmtPct(num(r, 'price_change')), numeric: true },
    { key: bid, label: `Bid ${p.level} bps`, value: (r) => num(r, bid), render: (r) => fmtUsd(num(r, bid)), numeric: true },
    { key: ask, label: `Ask ${p.level} bps`, value: (r) => num(r, ask), render: (r) => fmtUsd(num(r, ask)), numeric: true },
    { key: 'tick_bps', label: 'Tick (bps)', value: (r) => num(r, 'tick_bps'), render: (r) => fmtNum(num(r, 'tick_bps')), numeric: true },
    { key: 'usd_open_interest', label: 'Open interest', value: (r) => num(r, 'usd_open_interest'), render: (r) => fmtUsd(num(r, 'usd_open_interest')), numeric: true },
    { key: 'funding_rate_8h', label: 'Funding 8h', value: (r) => num(r, 'funding_rate_8h'), render: (r) => fmtNum(num(r, 'funding_rate_8h')), numeric: true },
  ];
  return (
    <Panel
      title="Leaderboard"
      wide
      actions={
        <span className="actions">
          <label>
            Market type
            <select value={marketType} onChange={(e) => { setMarketType(e.target.value as MarketType); setPage(1); }}>
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
            <Table caption="Pairs across exchanges, ranked by the service" columns={columns} rows={rows} rowKey={(r) => `${str(r, 'exchange')} ${str(r, 'pair')}`} sort={sort} onSort={(s) => { setSort(s); setPage(1); }} />
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
