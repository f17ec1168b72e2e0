// The RFQ Telegram notifier against a local HTTP server standing in for the Bot API: an
// opened RFQ reaches its project's chat and the chats of the market makers it invites; a
// draft reaches nobody; a proposal of a sealed RFQ reaches the project without its author
// before the deadline, and its market maker in full; an event that comes again, also
// after a restart, is not sent again; a failed send is retried.
import { expect } from 'chai';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgreementStore } from '../../domain/agreements/store.ts';
import { newRfq, rfqRecord, type RfqTerms } from '../../domain/rfq/rfq.ts';
import { topicName } from '../../lib/kafka.ts';
import { eventOf } from '../../processors/agreements/event-relay.ts';
import { rfqTelegramNotifier } from '../../processors/rfq/notifier.ts';
import type { AgreementEventMessage } from '../../schemas/index.ts';
import { seed, waitFor, world } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

describe('RFQ Telegram notifier', function () {
  this.timeout(60_000);
  const w = world();
  const mm2 = `mm2-${w.tag}`;
  const chats: Record<string, string> = { [w.project]: '-100111', [w.mm]: '-100222' };
  w.fixture.organizations = w.fixture.organizations!.map((o) => (chats[o.slug] ? { ...o, telegram_chat_id: chats[o.slug] } : o));
  // Invited, but without a chat: told nothing.
  w.fixture.organizations.push({ slug: mm2, name: 'Maker two', kind: 'market_maker' });
  const calls: { chat_id: string; text: string }[] = [];
  let failNext = 1;
  let server: http.Server;
  let url: string;
  const rfqId = 800_000_000 + crypto.randomInt(100_000_000);
  const terms: RfqTerms = {
    asset: w.asset,
    title: `Sealed listing ${w.tag}`,
    description: '',
    models: ['hybrid'],
    exchanges: [w.ex],
    pairs: [`${w.asset}/USDT`],
    markets: [{ exchange: w.ex, pair: `${w.asset}/USDT` }],
    loan_budget: { quantity: 1000, quote_amount: 0 },
    term_days: 30,
    requirements: [],
    invited: [w.mm, mm2],
    sealed: true,
    deadline: Date.now() + 86_400_000,
  };
  const rfq = newRfq(rfqId, w.project, terms, Date.now(), 1);
  const opened = { ...rfq, status: 'open' as const, version: 2 };
  const event = (over: Partial<AgreementEventMessage>): AgreementEventMessage => ({ ...eventOf(rfqRecord(opened, { at: Date.now(), by: 1 })), ...over });
  const proposal = event({ event_id: `proposal:${rfqId}:1`, type: 'proposal', id: rfqId, version: 1, status: 'submitted', market_maker: w.mm, rfq: rfqId, record: {} });

  const produce = async (events: AgreementEventMessage[]) => {
    const { kafka, config } = testStack();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: topicName(config, 'rfq.events'), messages: events.map((e) => ({ key: `${e.type}:${e.id}`, value: JSON.stringify(e) })) });
    await producer.disconnect();
  };
  const start = () => {
    const { kafka, config, service, log } = testStack();
    return rfqTelegramNotifier(kafka, service.deps.ch, { ...config, flushIntervalMs: 200 }, { token: 'TEST:TOKEN', apiUrl: url, backoffMs: 50 }, log, () => Date.now());
  };
  const mine = () => calls.filter((c) => c.text.includes(String(rfqId)));

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
        calls.push(JSON.parse(body) as { chat_id: string; text: string });
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true,"result":{}}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await seed(w.fixture);
    await new AgreementStore(testStack().service.deps.ch).write([rfqRecord(rfq, { at: Date.now(), by: 1 }), rfqRecord(opened, { at: Date.now(), by: 1 })]);
  });

  after(() => new Promise<void>((r) => server.close(() => r())));

  it('tells the project and the invited market makers with a chat, once each; a draft nobody', async () => {
    const notifier = start();
    await notifier.start();
    await produce([event({ event_id: `rfq:${rfqId}:1`, version: 1, status: 'draft' }), event({ event_id: `rfq:${rfqId}:2` }), event({ event_id: `rfq:${rfqId}:2` })]);
    await waitFor('two messages', async () => mine().length >= 2);
    // Anything more (the draft, the repeat) would come with the same flushes.
    await new Promise((r) => setTimeout(r, 1_500));
    await notifier.stop();
    expect(mine().map((c) => c.chat_id).sort()).to.deep.equal([chats[w.mm], chats[w.project]].sort());
    for (const c of mine()) {
      expect(c.text).to.contain(`RFQ #${rfqId} "${terms.title}" for ${w.asset}: open`);
      expect(c.text).to.contain('(sealed)');
    }
  });

  it("a sealed RFQ's proposal: the project is not told by whom; no repeat after a restart", async () => {
    const notifier = start();
    await notifier.start();
    await produce([proposal, event({ event_id: `rfq:${rfqId}:2` })]);
    await waitFor('the proposal messages', async () => mine().length >= 4);
    await new Promise((r) => setTimeout(r, 1_500));
    await notifier.stop();
    const last = mine().slice(2);
    expect(last).to.have.length(2);
    const toProject = last.find((c) => c.chat_id === chats[w.project])!;
    const toMaker = last.find((c) => c.chat_id === chats[w.mm])!;
    expect(toProject.text).to.contain('A sealed proposal changed: submitted');
    expect(toProject.text).to.not.contain(w.mm);
    expect(toMaker.text).to.contain(`Your proposal #${rfqId} (version 1): submitted`);
  });
});
