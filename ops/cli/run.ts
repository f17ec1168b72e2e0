// Shared by the long-running commands: config errors printed plainly, and one clean
// shutdown on the first Ctrl-C (a second one forces the exit).
import { ConfigError, loadConfig, type Config } from '../../lib/config.ts';
import { createLogger, type Logger } from '../../lib/log.ts';

export function boot(name: string): { config: Config; log: Logger } {
  try {
    const config = loadConfig();
    return { config, log: createLogger(config.logLevel, name) };
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
}

export function onShutdown(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) {
      log.warn('forced exit');
      process.exit(130);
    }
    stopping = true;
    log.info(`${signal}: stopping everything this command started...`);
    stop()
      .then(() => process.exit(0))
      .catch((e: unknown) => {
        log.error('shutdown failed', { err: e as Error });
        process.exit(1);
      });
  };
  process.on('SIGINT', () => handler('SIGINT'));
  process.on('SIGTERM', () => handler('SIGTERM'));
}

export function fail(log: Logger, e: unknown): never {
  log.error((e as Error).message ?? String(e));
  process.exit(1);
}
