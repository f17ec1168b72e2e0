// A small structured logger: one line per event, `key=value` fields. Secrets never reach
// it: callers pass identifiers (user id, token prefix), never tokens or passwords.
import type { LogLevel } from './config.ts';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(name: string): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(level: LogLevel = 'info', name = 'mm', write: (line: string) => void = (l) => process.stderr.write(l + '\n')): Logger {
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    let line = `${new Date().toISOString()} ${lvl.toUpperCase().padEnd(5)} [${name}] ${msg}`;
    if (fields) for (const [k, v] of Object.entries(fields)) line += ` ${k}=${formatValue(v)}`;
    write(line);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (child) => createLogger(level, `${name}.${child}`, write),
  };
}

function formatValue(v: unknown): string {
  if (v instanceof Error) return JSON.stringify(v.message);
  if (typeof v === 'string') return /^[\w.:/@-]*$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

/** For tests: a logger that prints nothing. */
export const silentLogger: Logger = createLogger('error', 'silent', () => {});
