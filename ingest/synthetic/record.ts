// Writes a recording of one pair's order book from the synthetic market, in the recorder
// format `npm run ingest:replay` reads ({t, b, a} lines: epoch ms, bids, asks). The demo's
// recording (ops/demo/recordings/) was made with it, so the project ships its own data:
//   node --import tsx ingest/synthetic/record.ts --out FILE [--pair BTC/USD] [--from ISO]
//     [--snapshots 390] [--every-ms 2000] [--levels 10] [--seed 7]
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { SyntheticMarket } from './market.ts';

const { values } = parseArgs({
  options: {
    out: { type: 'string' },
    pair: { type: 'string', default: 'BTC/USD' },
    from: { type: 'string', default: '2026-06-25T10:00:00Z' },
    snapshots: { type: 'string', default: '390' },
    'every-ms': { type: 'string', default: '2000' },
    levels: { type: 'string', default: '10' },
    seed: { type: 'string', default: '7' },
  },
});
if (!values.out) {
  process.stderr.write('usage: record.ts --out FILE [--pair BTC/USD] [--from ISO] [--snapshots N] [--every-ms MS] [--levels N] [--seed N]\n');
  process.exit(2);
}
const pair = values.pair!;
const market = new SyntheticMarket([{ exchange: 'recording', pair, asset: pair.split('/')[0]!, market_type: 'spot' }], Number(values.seed));
const every = Number(values['every-ms']);
const levels = Number(values.levels);
const start = Date.parse(values.from!);
const lines: string[] = [];
for (let i = 0; i < Number(values.snapshots); i++) {
  const t = start + i * every;
  const book = market.tick(t, every).books[0]!;
  lines.push(JSON.stringify({ t, b: book.bids.slice(0, levels), a: book.asks.slice(0, levels) }));
}
fs.writeFileSync(values.out, lines.join('\n') + '\n');
process.stderr.write(`${lines.length} snapshots of ${pair} from ${new Date(start).toISOString()} written to ${values.out}\n`);
