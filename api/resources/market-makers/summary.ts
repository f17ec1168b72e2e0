// GET /v2/organizations/market-maker-metrics/summary/ (specification 4.10): per market
// maker, exchange, pair and bucket, volume and depth with their coverage of the whole
// market. Trusted values replace reported ones (addendum section 4): a bucket with any
// wallet's trusted values has a row per wallet (`source: wallet`), else the reported row.
//
// The JSON answer is written as text per market maker, pair and bucket (the same text
// JSON.stringify gives of the rows, written from packed rows on both cores: row-text.ts),
// and the text of sealed buckets is kept between requests (sealed-rows.ts): only the
// buckets not kept are read and written anew.
import { sendRows, wantsCsv } from '../../http/csv.ts';
import { timeColumnNames, timestampOf } from '../../../domain/market/timestamps.ts';
import { validators } from '../market/schemas.ts';
import { INTERVALS } from '../../../domain/market/facts.ts';
import { depthNames, makerPairColumns, parseMmRequest, type MmRequest } from './request.ts';
import type { MmHandler, MmServices } from './services.ts';
import { answerEncoding, sendPieces, type Encoding, type Piece } from '../../http/compressed-pieces.ts';
import { addText, answerCells, cellFinder, sealedAnswer, type Texts } from './sealed-answer.ts';
import { KIND, RowPacker } from './row-text.ts';
import { writeRowText } from './row-text-threads.ts';
import { coverage, coveragePacked, packValues, shownValues, type PackedValues, type Values } from '../../../domain/market-makers/values.ts';
import type { Cell, Want } from '../../../domain/market-makers/readings.ts';

const WANT: Want = { trustedDepth: true, trustedVolume: true, reported: 'untrusted', market: true };

export const summary: MmHandler = (s) => async (ctx, raw) => {
  const out = wantsCsv(ctx);
  const req = await parseMmRequest(s.deps, ctx, raw, { validate: validators.any, intervals: INTERVALS });
  const shape = shapeOf(req);
  if (!out.csv) {
    const encoding = answerEncoding(ctx);
    sendPieces(ctx, await summaryJson(s, req, shape, encoding), encoding);
    return;
  }
  const { cells, market } = await s.readings.values(req, WANT);
  const rows: Record<string, unknown>[] = [];
  for (const c of cells) {
    const head: Record<string, unknown> = {
      ...makerPairColumns(req, c.maker, c.pair),
      ...timestampOf(req.window, c.b),
    };
    for (const values of rowsOf(c, market(c.pair, c.b), shape.levels)) {
      const r = { ...head };
      shape.valueColumns.forEach((name, i) => (r[name] = values[i]));
      rows.push(r);
    }
  }
  sendRows(ctx, rows, shape.columns, out);
};

interface Shape {
  levels: number;
  columns: string[];
  /** The columns after the time columns, in order. */
  valueColumns: string[];
}

function shapeOf(req: MmRequest): Shape {
  const { levels } = req;
  const valueColumns = [
    'is_trusted',
    'source',
    'wallet_id',
    'wallet_number',
    'volume',
    'volume_coverage',
    ...depthNames(levels, 'bid'),
    ...depthNames(levels, 'ask'),
    ...depthNames(levels, 'bid', '_coverage'),
    ...depthNames(levels, 'ask', '_coverage'),
  ];
  return {
    levels: levels.length,
    columns: ['organization', 'asset', 'exchange', 'pair', ...timeColumnNames(req.window), ...valueColumns],
    valueColumns,
  };
}

type Scalar = number | string | boolean | null;

/** The value columns of each row a cell shows: one per wallet with trusted values, else the reported one (the JSON text in summaryJson, in this order). */
function rowsOf(c: Cell, whole: Values | undefined, levels: number): Scalar[][] {
  const known = (x: number) => (Number.isNaN(x) ? null : x);
  const row = (v: PackedValues, wallet: { id: number; number: number } | undefined): Scalar[] => {
    const r: Scalar[] = [wallet !== undefined, wallet ? 'wallet' : 'organization', wallet?.id ?? null, wallet?.number ?? null, known(v[0]!), coverage(known(v[0]!), whole?.volume)];
    for (let i = 0; i < levels; i++) r.push(known(v[1 + i]!));
    for (let i = 0; i < levels; i++) r.push(known(v[1 + levels + i]!));
    for (let i = 0; i < levels; i++) r.push(coverage(known(v[1 + i]!), whole?.bid[i]));
    for (let i = 0; i < levels; i++) r.push(coverage(known(v[1 + levels + i]!), whole?.ask[i]));
    return r;
  };
  return shownValues(c.trusted, c.reported && packValues(c.reported)).map((x) => row(x.values, x.wallet));
}

/** The answer's JSON text: sealed blocks' text kept between requests (sealed-answer.ts). */
async function summaryJson(s: MmServices, req: MmRequest, shape: Shape, encoding: Encoding | undefined): Promise<Piece[]> {
  const w = req.window;
  const cells = answerCells(req);
  const n = shape.levels;
  // The columns of rowsOf, packed as numbers (row-text.ts): is_trusted, source, wallet id and
  // number, volume and its coverage, then depth and coverage at each level.
  const keys = shape.valueColumns.map((name) => `,${JSON.stringify(name)}:`);
  const kinds = Uint8Array.from(shape.valueColumns, (_, i) => (i === 0 ? KIND.bool : i === 1 ? KIND.text : KIND.number));
  const compute = async (part: MmRequest): Promise<Texts> => {
    const { cells: found, market } = await s.readings.values(part, WANT);
    const cellOf = cellFinder(cells);
    const timestamps = new Map<number, string>();
    // A row per wallet with trusted values, else one: the rows' numbers allocated once.
    const packer = new RowPacker(keys, kinds, found.reduce((n, c) => n + Math.max(1, c.trusted.length), 0));
    const [wallet, organization] = [packer.text('"wallet"'), packer.text('"organization"')];
    const groups: [string, number][] = [];
    for (const c of found) {
      const cell = cellOf(c.maker, c.pair);
      if (!cell) continue;
      const shown = shownValues(c.trusted, c.reported && packValues(c.reported));
      if (shown.length === 0) continue;
      let ts = timestamps.get(c.b);
      if (ts === undefined) timestamps.set(c.b, (ts = w.interval === 'a' ? '' : `,"timestamp":${JSON.stringify(timestampOf(w, c.b).timestamp)}`));
      const whole = market(c.pair, c.b);
      for (const { values: v, wallet: wt } of shown) {
        const at = packer.add(cell.head, ts);
        const r = packer.values;
        r[at] = wt ? 1 : 0;
        r[at + 1] = wt ? wallet : organization;
        r[at + 2] = wt ? wt.id : NaN;
        r[at + 3] = wt ? wt.number : NaN;
        r[at + 4] = v[0]!;
        r[at + 5] = coveragePacked(v[0]!, whole?.volume);
        for (let i = 0; i < n; i++) {
          const bid = v[1 + i]!;
          const ask = v[1 + n + i]!;
          r[at + 6 + i] = bid;
          r[at + 6 + n + i] = ask;
          r[at + 6 + 2 * n + i] = coveragePacked(bid, whole?.bid[i]);
          r[at + 6 + 3 * n + i] = coveragePacked(ask, whole?.ask[i]);
        }
      }
      if (packer.endGroup()) groups.push([cell.key, c.b]);
    }
    const written = await writeRowText(packer.packed());
    const texts: Texts = new Map();
    groups.forEach(([cell, b], g) => addText(texts, cell, b, written.group(g)));
    return texts;
  };
  return sealedAnswer(s, req, { cache: s.caches.summary, variant: `summary|${req.levels.join(',')}`, cells, compute, encoding });
}
