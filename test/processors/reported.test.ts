// The mm.reported processor on messages produced from outside the service (plain JSON, as
// a producer without the registry sends them): what it dead-letters and why, that it
// writes a valid one with the Kafka message's time as the push time, and that re-reading
// the topic (a replay: the same messages again, and a whole new pass over the topic)
// changes no value.
import { expect } from 'chai';
import { MarketMakerMetrics } from '../../domain/market-makers/metrics.ts';
import { ReportedRepository, type ReportedRow } from '../../domain/market-makers/reported.ts';
import { dlqTopicName, topicName } from '../../lib/kafka.ts';
import { reportedConsumer } from '../../processors/reported/processor.ts';
import { dlqRecords, seed, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const HOUR = 3_600_000;

describe('mm.reported processor', function () {
  this.timeout(90_000);
  const w = world();
  const pair = `${w.asset}/USDT`;
  const H = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
  const msg = (over: Record<string, unknown> = {}) => ({
    organization: w.mm,
    asset: w.asset,
    exchange: w.ex,
    pair,
    metric: 'volume/volume',
    interval: '1h',
    timestamp: new Date(H).toISOString(),
    value: 1,
    ...over,
  });
  const repo = () => new ReportedRepository(testStack().service.deps.ch);
  const rowsOf = (metric: string, ready: (rows: ReportedRow[]) => boolean) =>
    waitFor(`mm_reported rows of ${metric}`, async () => {
      const rows = await repo().latest(w.mm, { metric });
      return ready(rows) && rows;
    });
  /** Sends plain JSON values with the given Kafka timestamps (the push time the processor reads). */
  const produce = async (messages: { value: unknown; at: number }[]) => {
    const { kafka, config } = testStack();
    const producer = kafka.producer();
    await producer.connect();
    try {
      await producer.send({
        topic: topicName(config, 'mm.reported'),
        messages: messages.map(({ value, at }) => ({ key: `${w.mm}:${w.ex}:${pair}`, value: typeof value === 'string' ? value : JSON.stringify(value), timestamp: String(at) })),
      });
    } finally {
      await producer.disconnect();
    }
  };

  before(async () => {
    await seed(w.fixture);
  });

  it('dead-letters what the contract refuses, each with its reason, and goes on', async () => {
    const now = Date.now();
    const bad: [string, unknown][] = [
      [`unknown organization: nobody-${w.tag}`, msg({ organization: `nobody-${w.tag}` })],
      [`not a market maker: ${w.project} is a project organization`, msg({ organization: w.project })],
      [`unknown pair: ${w.ex} NOPE${w.tag}/USDT`, msg({ pair: `NOPE${w.tag}/USDT` })],
      [`pair of another asset: ${w.ex} ${w.other}/USDT is a pair of ${w.other}, not of ${w.asset}`, msg({ pair: `${w.other}/USDT` })],
      ['unknown metric: volume/twap is not an mm metric identifier', msg({ metric: 'volume/twap', value: 1.25 })],
      [`misaligned timestamp: ${new Date(H + 60_000).toISOString()} is not the start of a 1h interval (UTC)`, msg({ timestamp: H + 60_000 })],
      ['negative value: -3', msg({ value: -3 })],
      ['percentage over 100: 250 for uptime/spread/spread_uptime', msg({ metric: 'uptime/spread/spread_uptime', value: 250 })],
      ['timestamp before 1970: 1969-12-31T00:00:00.000Z', msg({ interval: '1d', timestamp: '1969-12-31T00:00:00Z' })],
      ['schema: /interval must be equal to one of the allowed values', msg({ interval: '1m', value: 2.5 })],
    ];
    const valid = msg({ metric: 'depth/bid_5bps', value: 17 });
    await produce([...bad.map(([, value]) => ({ value, at: now })), { value: valid, at: now }]);

    const records = await dlqRecords(dlqTopicName(testStack().config, 'mm.reported'), (rs) => bad.every(([, value]) => rs.some((r) => r.value === JSON.stringify(value))));
    for (const [reason, value] of bad) {
      const record = records.find((r) => r.value === JSON.stringify(value))!;
      expect(record.reason, JSON.stringify(value)).to.equal(reason);
      expect(record.key).to.equal(`${w.mm}:${w.ex}:${pair}`);
    }
    // The valid message after them is written, its push time the message's own.
    const rows = await rowsOf('depth/bid_5bps', (x) => x.length === 1);
    expect(rows[0]).to.include({ value: 17, timestamp: H, pushedAt: now, interval: '1h', asset: w.asset });
  });

  it('dead-letters a bucket that starts after its push time', async () => {
    const at = H + HOUR - 1;
    const value = msg({ metric: 'depth/ask_5bps', timestamp: new Date(H + HOUR).toISOString() });
    await produce([{ value, at }]);
    const records = await dlqRecords(dlqTopicName(testStack().config, 'mm.reported'), (rs) => rs.some((r) => r.value === JSON.stringify(value)));
    expect(records.find((r) => r.value === JSON.stringify(value))!.reason).to.equal(
      `timestamp after its push: ${new Date(H + HOUR).toISOString()} is later than the message's time ${new Date(at).toISOString()}`,
    );
  });

  it('writes a message of several items (more) whole, and dead-letters one with a bad item whole', async () => {
    const now = Date.now();
    const more = (metric: string, value: number, over: Record<string, unknown> = {}) => ({ metric, interval: '1h', timestamp: new Date(H).toISOString(), value, ...over });
    const good = msg({ metric: 'depth/bid_20bps', value: 20, more: [more('depth/ask_20bps', 21), more('depth/bid_20bps', 22, { timestamp: new Date(H - HOUR).toISOString() }), more('depth/bid_30bps', 1), more('depth/bid_30bps', 2)] });
    // Its fields of the key come from the message, not from an item of `more`.
    const badKeyInMore = msg({ metric: 'depth/bid_40bps', value: 1, more: [{ ...more('depth/ask_40bps', 1), organization: `nobody-${w.tag}` }] });
    const bad: [string, unknown][] = [
      ['/more/1: negative value: -1', msg({ metric: 'depth/bid_50bps', value: 5, more: [more('depth/ask_50bps', 5), more('depth/bid_60bps', -1)] })],
      ["schema: /more/0: (root) must have required property 'value'", msg({ metric: 'depth/bid_50bps', value: 5, more: [{ metric: 'depth/ask_50bps', interval: '1h', timestamp: H }] })],
      ['schema: /more must be a list of items', msg({ metric: 'depth/bid_50bps', value: 5, more: 'x' })],
      ['schema: /more/0 must be an object', msg({ metric: 'depth/bid_50bps', value: 5, more: [3] })],
    ];
    await produce([...bad.map(([, value]) => ({ value, at: now })), { value: good, at: now }, { value: badKeyInMore, at: now }]);
    const records = await dlqRecords(dlqTopicName(testStack().config, 'mm.reported'), (rs) => bad.every(([, value]) => rs.some((r) => r.value === JSON.stringify(value))));
    for (const [reason, value] of bad) expect(records.find((r) => r.value === JSON.stringify(value))!.reason, JSON.stringify(value)).to.equal(reason);

    await rowsOf('depth/ask_40bps', (x) => x.length === 1);
    const values = async (metric: string) => (await repo().latest(w.mm, { metric })).map((r) => [r.timestamp, r.value, r.pushedAt]);
    expect(await values('depth/bid_20bps')).to.deep.equal([
      [H - HOUR, 22, now],
      [H, 20, now],
    ]);
    expect(await values('depth/ask_20bps')).to.deep.equal([[H, 21, now]]);
    // The same key twice in one message: the later item wins.
    expect(await values('depth/bid_30bps')).to.deep.equal([[H, 2, now]]);
    // Nothing of a dead-lettered message is written, not even its valid items.
    expect(await values('depth/bid_50bps')).to.deep.equal([]);
    expect(await values('depth/ask_50bps')).to.deep.equal([]);
  });

  it('of two pushes of a key in the same millisecond, the endpoints read the later message', async () => {
    const metric = 'depth/ask_1bps';
    const at = Date.now();
    const marker = (name: string) => ({ value: msg({ metric: name, value: 1 }), at: Date.now() });
    // In two flushes: the later message's row is not simply the only one of its block.
    await produce([{ value: msg({ metric, value: 1 }), at }, marker('depth/ask_0.5bps')]);
    await rowsOf('depth/ask_0.5bps', (x) => x.length === 1);
    await produce([{ value: msg({ metric, value: 2 }), at }, marker('depth/ask_3bps')]);
    await rowsOf('depth/ask_3bps', (x) => x.length === 1);
    const metrics = new MarketMakerMetrics(testStack().service.deps.ch);
    const q = { keys: [{ organization: w.mm, exchange: w.ex, pair }], metrics: [metric], ranges: [[H, H + HOUR]] as [number, number][], interval: '1h' as const, zone: 'UTC' };
    const read = await metrics.reported(q);
    expect(read.map((r) => [r.b, r.sums.get(metric), r.counts.get(metric)])).to.deep.equal([[H / 1000, 2, 1]]);
    // Over `a` (every reported bucket of the window in one, grouped in the engine) the same,
    // the depth weighted by its length: an hour as 12 five minutes.
    const whole = await metrics.reported({ ...q, interval: 'a' });
    expect(whole.map((r) => [r.b, r.interval, r.sums.get(metric), r.counts.get(metric)])).to.deep.equal([[0, '1h', 2 * 12, 12]]);
    // The reconciliation's read: the bucket holds the key twice, so it is read again, latest push per key.
    const buckets = await metrics.reportedBuckets(q);
    expect(buckets.map((r) => [r.start, r.pushedAt, [...r.values]])).to.deep.equal([[H, at, [2]]]);
  });

  it('keeps the latest push of a key through a replay of older messages and a whole new pass over the topic', async () => {
    const metric = 'depth/bid_1bps';
    const t1 = Date.now();
    const older = { value: msg({ metric, value: 1 }), at: t1 };
    const newer = { value: msg({ metric, value: 2 }), at: t1 + 1 };
    await produce([older, newer]);
    const rows = await rowsOf(metric, (x) => x[0]?.value === 2);
    expect(rows).to.have.length(1);
    expect(rows[0]!.pushedAt).to.equal(t1 + 1);

    // The older message again, as a replay delivers it (same value, same time), then a
    // marker on the same key (so the same partition): once the marker is written, so is it.
    await produce([older, { value: msg({ metric: 'depth/bid_0.5bps', value: 3 }), at: Date.now() }]);
    await rowsOf('depth/bid_0.5bps', (x) => x.length === 1);
    expect(await repo().latest(w.mm, { metric })).to.deep.equal(rows);

    // A whole new pass over the topic from its start, as an operator's replay runs it.
    const { kafka, config, service, log } = testStack();
    const admin = kafka.admin();
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets(topicName(config, 'mm.reported'));
    await admin.disconnect();
    const total = offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0);
    const replay = reportedConsumer(
      kafka,
      { config, ch: service.deps.ch, registry: { client: service.registry.client, schemaIds: service.schemaIds }, log, now: Date.now },
      { flushIntervalMs: 200, groupId: `${config.topicPrefix}test-replay-${w.tag}` },
    );
    await replay.start();
    try {
      await waitFor('the replay to read the whole topic', async () => replay.stats.ok + replay.stats.deadLettered + replay.stats.skipped >= total, 60_000);
    } finally {
      await replay.stop();
    }
    expect(await repo().latest(w.mm, { metric })).to.deep.equal(rows);
    const other = await repo().latest(w.mm, { metric: 'depth/bid_5bps' });
    expect(other.map((r) => r.value)).to.deep.equal([17]);
  });
});
