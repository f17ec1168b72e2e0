// Versioned migrations: schemas/clickhouse/NNN_name.sql, applied in order at start. Each
// statement is idempotent (IF NOT EXISTS), and applied versions are recorded, so a crash
// half-way through a file is mended by running it again. A step SQL cannot make
// idempotent (a new sort key: lib/rekey.ts) is a module, NNN_name.ts, whose `up` is
// written to be run again after a crash.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ClickHouse } from './clickhouse.ts';
import type { Logger } from './log.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../schemas/clickhouse/', import.meta.url));

export interface Migration {
  version: number;
  name: string;
  /** A .sql file's statements; none for a module. */
  statements: string[];
  /** A .ts module's path: its `up(ch, log)` is the step. */
  module?: string;
}

/** What a migration module exports. */
export interface MigrationModule {
  up(ch: ClickHouse, log: Logger): Promise<void>;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = fs.readdirSync(dir).filter((f) => /^\d{3}_[\w-]+\.(sql|ts)$/.test(f)).sort();
  const migrations = files.map((file): Migration => {
    const [version, name] = [Number(file.slice(0, 3)), file.slice(4).replace(/\.(sql|ts)$/, '')];
    if (file.endsWith('.ts')) return { version, name, statements: [], module: path.join(dir, file) };
    return { version, name, statements: splitStatements(fs.readFileSync(path.join(dir, file), 'utf8')) };
  });
  const twice = migrations.find((m, i) => i > 0 && migrations[i - 1]!.version === m.version);
  if (twice) throw new Error(`two migrations are numbered ${twice.version} in ${dir}`);
  return migrations;
}

/** Splits on `;` at the end of a line, after dropping `--` comment lines. */
export function splitStatements(sql: string): string[] {
  const body = sql
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n');
  return body
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export async function migrate(ch: ClickHouse, log: Logger, dir = MIGRATIONS_DIR): Promise<number> {
  await ch.command(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version UInt32, name String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
  ) ENGINE = ReplacingMergeTree ORDER BY version`);
  const applied = new Set(
    (await ch.query<{ version: number }>('SELECT version FROM schema_migrations FINAL')).map((r) => Number(r.version)),
  );
  let count = 0;
  for (const m of readMigrations(dir)) {
    if (applied.has(m.version)) continue;
    log.info('applying migration', { version: m.version, name: m.name });
    for (const statement of m.statements) await ch.command(statement);
    if (m.module) await ((await import(pathToFileURL(m.module).href)) as MigrationModule).up(ch, log.child(m.name));
    await ch.insert('schema_migrations', [{ version: m.version, name: m.name }]);
    count++;
  }
  return count;
}
