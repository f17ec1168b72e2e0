// Shared by the long-running commands: config errors printed plainly, and one clean
// shutdown on the first Ctrl-C or SIGTERM (a second one forces the exit), within 10 s.
import { embeddedEngineIdle } from '../../lib/clickhouse.ts';
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

/** What a supervisor waits after SIGTERM before it kills; the stop must end sooner. */
export const SHUTDOWN_DEADLINE_MS = 10_000;

/**
 * Exits, unless the embedded engine still runs a statement that its cancel did not stop:
 * then exit() would wait for that statement (minutes, deaf to signals), so the process
 * kills itself instead. Nothing is lost either way: offsets are committed only after the
 * writes they cover, and ClickHouse drops a part that was not completely written.
 */
export async function exitWhenIdle(log: Logger, code: number, withinMs: number): Promise<never> {
  if (!(await embeddedEngineIdle(withinMs))) {
    log.error('a ClickHouse statement still runs after its cancel; killing the process (uncommitted offsets are read again at the next start)');
    process.kill(process.pid, 'SIGKILL');
  }
  process.exit(code);
}

export function onShutdown(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) {
      log.warn('forced exit');
      void exitWhenIdle(log, 130, 0);
      return;
    }
    stopping = true;
    log.info(`${signal}: stopping everything this command started...`);
    const began = Date.now();
    // Whatever the stop is waiting for (a broker that went away), the exit comes in time.
    const deadline = setTimeout(() => {
      log.error('the stop did not finish in time; exiting without it');
      void exitWhenIdle(log, 1, 500);
    }, SHUTDOWN_DEADLINE_MS - 1_500);
    stop()
      .then(
        () => 0,
        (e: unknown) => {
          log.error('shutdown failed', { err: e as Error });
          return 1;
        },
      )
      .then((code) => {
        clearTimeout(deadline);
        return exitWhenIdle(log, code, Math.max(0, SHUTDOWN_DEADLINE_MS - 1_000 - (Date.now() - began)));
      });
  };
  process.on('SIGINT', () => handler('SIGINT'));
  process.on('SIGTERM', () => handler('SIGTERM'));
}

export function fail(log: Logger, e: unknown): never {
  log.error((e as Error).message ?? String(e));
  process.exit(1);
}
