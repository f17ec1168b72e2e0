// The Telegram notifier against a local HTTP server standing in for the Bot API: a status
// change of a target with telegram_notifications reaches its organization's chat once, after
// a failed attempt is retried; a repeat of the event (on the topic, or read again after a
// restart) is not sent again; targets without notifications or chats send nothing.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { telegramNotifier, telegramText } from '../../processors/targets/notifier.ts';
import { topicName } from '../../lib/kafka.ts';
import type { TargetEventMessage } from '../../schemas/index.ts';
import { seed, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

describe('Telegram notifier', function () {
  this.timeout(60_000);
  const w = world();
  w.fixture.organizations = w.fixture.organizations!.map((o) => (o.slug === w.project ? { ...o, telegram_chat_id: -100123 } : o));
  const calls: { path: string; body: { chat_id: string; text: string } }[] = [];
  let failNext = 1;
  let server: http.Server;
  let url: string;

  const event = (over: Partial<TargetEventMessage> = {}): TargetEventMessage => ({
    event_id: `1:${w.tag}`,
    target_id: 1,
    type: 'gb',
    organization: w.project,
    asset: w.asset,
    exchange: w.ex,
    pair: `${w.asset}/USDT`,
    metric: 'spread/spread_bps',
    market_hours: null,
    previous_status: 'stable',
    status: 'alert',
    value: 27.5,
    effective_threshold: 10,
    direction: 'below',
    minute: '2026-06-25T10:00:00.000Z',
    telegram_notifications: true,
    ...over,
  });
  const produce = async (events: TargetEventMessage[]) => {
    const { kafka, config } = testStack();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: topicName(config, 'targets.events'), messages: events.map((e) => ({ key: String(e.target_id), value: JSON.stringify(e) })) });
    await producer.disconnect();
  };
  const start = () => {
    const { kafka, config, service, log } = testStack();
    return telegramNotifier(kafka, service.deps.ch, { ...config, flushIntervalMs: 200 }, { token: 'TEST:TOKEN', apiUrl: url, backoffMs: 50 }, log);
  };

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        if (failNext > 0) {
          failNext--;
          res.writeHead(502).end();
          return;
        }
        calls.push({ path: req.url ?? '', body: JSON.parse(body) as { chat_id: string; text: string } });
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true,"result":{}}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await seed(w.fixture);
  });

  after(() => new Promise<void>((r) => server.close(() => r())));

  it('sends one clear message per change to the chat, retrying a failed send', async () => {
    const notifier = start();
    await notifier.start();
    await produce([
      event(),
      event({ event_id: `2:${w.tag}`, target_id: 2, telegram_notifications: false }),
      event({ event_id: `3:${w.tag}`, target_id: 3, organization: w.mm, type: 'mm' }),
      event(),
    ]);
    await waitFor('the message', async () => calls.length >= 1);
    await new Promise((r) => setTimeout(r, 1_500));
    await notifier.stop();
    expect(calls).to.have.length(1);
    expect(calls[0]!.path).to.equal('/botTEST:TOKEN/sendMessage');
    expect(calls[0]!.body.chat_id).to.equal('-100123');
    expect(calls[0]!.body.text).to.equal(telegramText(event()));
    for (const part of [w.asset, `${w.asset}/USDT`, w.ex, 'spread/spread_bps', '27.5', '<= 10', 'stable -> alert']) expect(calls[0]!.body.text).to.contain(part);
  });

  it('does not send an event again after a restart, even when it comes again', async () => {
    const notifier = start();
    await notifier.start();
    await produce([event(), event({ event_id: `4:${w.tag}`, target_id: 4, status: 'recovering', previous_status: 'alert', value: 8 })]);
    await waitFor('the second message', async () => calls.length >= 2);
    await new Promise((r) => setTimeout(r, 1_000));
    await notifier.stop();
    expect(calls.map((c) => c.body.text.split('\n')[2])).to.deep.equal(['Status: stable -> alert', 'Status: alert -> recovering']);
  });
});
