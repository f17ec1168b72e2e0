// npm start: Redis, Kafka and the schema registry (started when nothing answers), then the service.
import { ensureKafka, ensureRedis, ensureSchemaRegistry, stopAll, type Started } from '../infra.ts';
import { startService } from '../service.ts';
import { ensureWebBuild } from '../web-build.ts';
import { boot, fail, onShutdown } from './run.ts';

const { config, log } = boot('start');
const started: (Started | undefined)[] = [];
onShutdown(log, async () => {
  await service?.stop();
  await stopAll(started, log);
});
let service: Awaited<ReturnType<typeof startService>> | undefined;
try {
  await ensureWebBuild(log);
  started.push(await ensureRedis(config, log));
  started.push(await ensureKafka(config, log));
  started.push(await ensureSchemaRegistry(config, log));
  service = await startService(config, log);
  log.info(`serving at ${service.api.url} (web app at ${service.api.url}/app/); load reference data with: npm run seed -- <fixture.json>`);
} catch (e) {
  await stopAll(started, log);
  fail(log, e);
}
