// npm run ops:replay -- --topic md.orderbook (--earliest | --offset N [--partition P] | --time ISO)
// Moves a processor's committed offsets back so it reads the topic again from there. Stop
// the service first: Kafka only lets offsets of a group without members be moved. Replays
// change no answer: minutes already written are not rebuilt (their messages are
// recognised as re-reads), and every open minute is rebuilt from all its messages.
import { parseArgs } from 'node:util';
import { DateTime } from 'luxon';
import { createKafka, topicName, type BaseTopic } from '../../lib/kafka.ts';
import { DERIVATIVES_GROUP } from '../../processors/derivatives/processor.ts';
import { FILLS_GROUP } from '../../processors/market-makers/fills.ts';
import { OWN_ORDERS_GROUP } from '../../processors/market-makers/own-orders.ts';
import { REPORTED_GROUP } from '../../processors/reported/processor.ts';
import { ORDERBOOK_GROUP } from '../../processors/orderbook/processor.ts';
import { TRADES_GROUP } from '../../processors/trades/processor.ts';
import { boot, fail } from './run.ts';

const GROUPS: Partial<Record<BaseTopic, string>> = {
  'md.orderbook': ORDERBOOK_GROUP,
  'md.trades': TRADES_GROUP,
  'md.derivatives': DERIVATIVES_GROUP,
  'mm.orders': OWN_ORDERS_GROUP,
  'mm.fills': FILLS_GROUP,
  'mm.reported': REPORTED_GROUP,
};

const { config, log } = boot('replay');
const { values } = parseArgs({
  options: {
    topic: { type: 'string' },
    earliest: { type: 'boolean', default: false },
    offset: { type: 'string' },
    partition: { type: 'string' },
    time: { type: 'string' },
  },
});
const usage = 'usage: npm run ops:replay -- --topic <md.orderbook|md.trades|md.derivatives> (--earliest | --offset N [--partition P] | --time ISO-8601)';
const base = values.topic as BaseTopic | undefined;
if (!base || !GROUPS[base]) fail(log, new Error(usage));
const chosen = [values.earliest, values.offset !== undefined, values.time !== undefined].filter(Boolean).length;
if (chosen !== 1) fail(log, new Error(usage));

const topic = topicName(config, base);
const groupId = config.topicPrefix + GROUPS[base]!;
const admin = createKafka(config, 'mm-ops-replay', log).admin();
try {
  await admin.connect();
  const [group] = (await admin.describeGroups([groupId])).groups;
  if (group && group.members.length > 0) {
    throw new Error(`group ${groupId} has ${group.members.length} running member(s): stop the service first (Ctrl-C on npm start / npm run demo)`);
  }
  const partitions = await admin.fetchTopicOffsets(topic);
  let target: { partition: number; offset: string }[];
  if (values.earliest) {
    target = partitions.map((p) => ({ partition: p.partition, offset: p.low }));
  } else if (values.time !== undefined) {
    const t = DateTime.fromISO(values.time, { zone: 'utc', setZone: true });
    if (!t.isValid) throw new Error(`--time ${values.time} is not an ISO 8601 time`);
    // Kafka's own message timestamps (when they were produced), not event time.
    target = (await admin.fetchTopicOffsetsByTimestamp(topic, t.toMillis())).map((p) => ({ partition: p.partition, offset: p.offset }));
  } else {
    if (!/^\d+$/.test(values.offset!)) throw new Error('--offset must be a whole number');
    const only = values.partition === undefined ? undefined : Number(values.partition);
    target = partitions
      .filter((p) => only === undefined || p.partition === only)
      .map((p) => ({ partition: p.partition, offset: String(Math.max(Number(p.low), Math.min(Number(values.offset), Number(p.high)))) }));
  }
  await admin.setOffsets({ groupId, topic, partitions: target });
  log.info(`${groupId} will read ${topic} again from: ${target.map((p) => `partition ${p.partition} offset ${p.offset}`).join(', ')}`);
  log.info('start the service (npm start) to replay');
} catch (e) {
  await admin.disconnect();
  fail(log, e);
}
await admin.disconnect();
