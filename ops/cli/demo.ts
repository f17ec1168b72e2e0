// npm run demo: everything, with demo data. Starts Redis, Kafka and the schema registry
// when nothing answers, the service (API + processors, embedded ClickHouse), loads the demo
// fixture, runs the synthetic exchange feed, and prints how to sign in. Ctrl-C stops all of it.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startSyntheticFeed, type RunningFeed } from '../../ingest/synthetic/feed.ts';
import { SyntheticMarketMakers, bucketKey } from '../../ingest/synthetic/market-makers.ts';
import { ReportedRepository } from '../../domain/market-makers/reported.ts';
import { seedDemoTargets } from '../demo/targets.ts';
import { seedDemoRfq } from '../demo/rfq.ts';
import { seedDemoLoans } from '../demo/loans.ts';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import { createKafka } from '../../lib/kafka.ts';
import type { FixtureFile } from '../../schemas/index.ts';
import { ensureKafka, ensureRedis, ensureSchemaRegistry, stopAll, type Started } from '../infra.ts';
import { startService, type Service } from '../service.ts';
import { ensureWebBuild } from '../web-build.ts';
import { boot, fail, onShutdown } from './run.ts';

const FIXTURE = fileURLToPath(new URL('../demo/fixture.json', import.meta.url));
const { config, log } = boot('demo');
const started: (Started | undefined)[] = [];
let service: Service | undefined;
let feed: RunningFeed | undefined;
onShutdown(log, async () => {
  await feed?.stop();
  await service?.stop();
  await stopAll(started, log);
});

try {
  log.info('starting the demo stack', { data_dir: config.dataDir });
  await ensureWebBuild(log);
  started.push(await ensureRedis(config, log));
  started.push(await ensureKafka(config, log));
  started.push(await ensureSchemaRegistry(config, log));
  service = await startService(config, log);
  const fixture = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as FixtureFile;
  const summary = await service.deps.loadFixture(fixture);
  log.info('demo fixture loaded', { pairs: summary.pairs, users: summary.users.created + summary.users.updated });
  const seeded = await seedDemoTargets(service.deps);
  if (seeded > 0) log.info('demo targets made', { targets: seeded });
  const loans = await seedDemoLoans(service.deps);
  if (loans > 0) log.info('demo loans made', { loans });
  if ((await seedDemoRfq(service.deps)) > 0) log.info('demo RFQ made');
  // coinbase BTC/USD is kept for replaying the recorded book (README): live synthetic
  // books would put its event time in the present and the recording's snapshots would be late.
  const fed = (fixture.pairs ?? []).filter((p) => !(p.exchange === 'coinbase' && p.pair === 'BTC/USD'));
  // The second market maker of the fixture overstates its depth threefold in its reports:
  // the reconciliation endpoint flags it (README).
  const makers = new SyntheticMarketMakers(fixture, { 'mm-two': 3 }, config.latenessMs, await pushedBuckets(service.deps.ch, fixture));
  const reported = service.deps.reportedMetrics;
  feed = await startSyntheticFeed(createKafka(config, 'mm-synthetic-feed', log.child('feed')), service.registry, config, fed, log.child('feed'), 1000, {
    model: makers,
    publish: (items, at) => reported.publish(items, at),
  });
  printBanner(service.api.url, fixture);
} catch (e) {
  await feed?.stop();
  await service?.stop().catch(() => undefined);
  await stopAll(started, log);
  fail(log, e);
}

/** The buckets the market makers pushed in an earlier run on this data (every push holds volume): kept as pushed. */
async function pushedBuckets(ch: ClickHouse, fixture: FixtureFile): Promise<Set<string>> {
  const repo = new ReportedRepository(ch);
  const out = new Set<string>();
  for (const o of (fixture.organizations ?? []).filter((x) => x.kind === 'market_maker')) {
    for (const r of await repo.latest(o.slug, { metric: 'volume/volume' })) out.add(bucketKey(r.organization, r.exchange, r.pair, r.interval, r.timestamp));
  }
  return out;
}

function printBanner(url: string, fixture: FixtureFile): void {
  const users = fixture.users ?? [];
  const roleOf = (u: (typeof users)[number]) =>
    u.is_staff ? 'staff' : (u.organizations ?? []).map((o) => `${o} (${fixture.organizations?.find((x) => x.slug === o)?.kind})`).join(', ');
  const owner = users.find((u) => u.email.startsWith('owner@')) ?? users[0]!;
  const lines = [
    '',
    '==================================================================',
    ` Web app: ${url}/app/  (sign in with an account below)`,
    ` API listening at ${url}`,
    '',
    ' Demo accounts (all with the password shown):',
    ...users.map((u) => `   ${u.email.padEnd(24)} ${u.password.padEnd(14)} ${roleOf(u)}`),
    '',
    ' Sign in and look around:',
    `   TOKEN=$(curl -s ${url}/v1/login/ -H 'Content-Type: application/json' \\`,
    `     -d '{"email":"${owner.email}","password":"${owner.password}"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).token')`,
    `   curl -s ${url}/v1/session/ -H "Authorization: Token $TOKEN"`,
    `   curl -s ${url}/v1/organizations/ -H "Authorization: Token $TOKEN"`,
    `   curl -s -X POST ${url}/v1/logout/ -H "Authorization: Token $TOKEN"`,
    '',
    ' Replay a recorded BTC/USD book through Kafka (in another terminal):',
    '   npm run ingest:replay -- ops/demo/recordings/btcusd-book.jsonl --exchange coinbase --pair BTC/USD',
    '',
    ' The synthetic feed is sending books, trades and perpetual data for',
    ` ${(fixture.pairs?.length ?? 1) - 1} pairs every second (not coinbase BTC/USD, kept for the`,
    ' recording). A minute shows in the market endpoints once its lateness (LATENESS_SECONDS,',
    ' 2 minutes) has passed, e.g.:',
    `   curl -s "${url}/v2/metrics/summary/?lookback=1-hour&bps=1,10" -H "Authorization: Token $TOKEN"`,
    '',
    ' The market makers quote and fill on their pairs (mm.orders, mm.fills) and report every',
    ' 30 s; mm-two overstates its depth threefold. Once their first minutes are written (about',
    ' 4 minutes), the reconciliation flags mm-two and not mm-one:',
    `   curl -s "${url}/v2/organizations/market-maker-metrics/reconciliation/?bps=10" -H "Authorization: Token $TOKEN"`,
    `   curl -s "${url}/v2/organizations/market-maker-metrics/summary/?bps=10&interval=5m&lookback=1-hour" -H "Authorization: Token $TOKEN"`,
    '',
    ' Targets are evaluated every minute over the trailing hour; within about 10 minutes the',
    ' list shows them stable, in alert, recovering (the volume target as its hour fills) and',
    ' unchecked, with facets:',
    `   curl -s "${url}/v2/organizations/targets/?include_facets=1&facets=status" -H "Authorization: Token $TOKEN"`,
    '',
    ' Loans: acme lends ACME to mm-one (active, valued at the 24-hour TWAP, its KPI from the',
    ' mm-one target) and to mm-two (settlement_due: its tranche has expired); a draft to mm-two',
    ' starting next week can be changed in the web app (Loans):',
    `   curl -s "${url}/v2/organizations/loans/?statuses=active,settlement_due" -H "Authorization: Token $TOKEN"`,
    '',
    ' RFQ: acme asked mm-one and mm-two for terms; both proposed. The comparison (cost, option',
    ' value, requirements met, each market maker\'s measured track record), then the award:',
    `   curl -s "${url}/v2/organizations/rfqs/?statuses=open" -H "Authorization: Token $TOKEN"`,
    `   curl -s "${url}/v2/organizations/rfqs/<id>/proposals/" -H "Authorization: Token $TOKEN"`,
    ' Ctrl-C stops everything.',
    '==================================================================',
    '',
  ];
  process.stdout.write(lines.join('\n'));
}
