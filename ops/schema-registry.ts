// Runs Apicurio Registry 3.0.9, a Confluent-compatible schema registry, for development,
// tests and the demo. Its ready-to-run distribution (a zip holding one runnable jar and
// its lib/) comes from Maven Central through ops/schema-registry/pom.xml, so it needs
// what Kafka needs: `java` (17+) and `mvn`.
//
// The program is unpacked once per pom into <repo>/.cache/schema-registry/<pom hash>/,
// outside DATA_DIR, so test and benchmark runs with a temporary DATA_DIR do not unpack
// it again. What it stores lives under <dataDir>/schema-registry/:
//   db/          the H2 database of subjects, versions and rules (kept between starts,
//                so the ids in framed messages already in Kafka stay valid)
//   registry.log its output
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findConfluentApi } from '../lib/schema-registry.ts';
import { fileTail, javaBin, parentDeathPrefix, superviseJvm } from './java-process.ts';
import { runMaven } from './maven.ts';

export interface SchemaRegistryProcess {
  url: string;
  stop(): Promise<void>;
}

export interface StartSchemaRegistryOptions {
  dataDir: string;
  port: number;
  log: (line: string) => void;
}

const JAR = 'apicurio-registry-app-3.0.9-runner.jar';
const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 20_000;

/** ops/schema-registry/pom.xml: next to this module when run from source (tsx), else under cwd. */
function pomFile(): string {
  const candidates = [join(dirname(fileURLToPath(import.meta.url)), 'schema-registry', 'pom.xml'), join(process.cwd(), 'ops', 'schema-registry', 'pom.xml')];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`ops/schema-registry/pom.xml not found (looked in ${candidates.join(', ')})`);
  return found;
}

/**
 * The registry's runnable jar, fetched and unpacked by Maven when this pom was not unpacked
 * before. Unpacks into a folder of its own and renames it into place, so two runs that
 * start at once (tests beside a demo) never see half a program.
 */
export async function installSchemaRegistry(log: (line: string) => void): Promise<string> {
  const pom = pomFile();
  const hash = createHash('sha256').update(readFileSync(pom, 'utf8')).digest('hex').slice(0, 16);
  const cache = join(resolve(dirname(pom), '..', '..'), '.cache', 'schema-registry');
  const home = join(cache, hash);
  const jar = join(home, JAR);
  if (existsSync(jar)) return jar;

  mkdirSync(cache, { recursive: true });
  const tmp = join(cache, `${hash}.${process.pid}.tmp`);
  rmSync(tmp, { recursive: true, force: true });
  log('fetching the schema registry (Apicurio Registry 3.0.9) with Maven: the first run downloads ~110 MB...');
  const started = Date.now();
  try {
    const { downloadedMb } = await runMaven({
      pom,
      args: ['dependency:unpack', `-Dregistry.dir=${tmp}`],
      what: 'the schema registry',
      log,
    });
    if (!existsSync(join(tmp, JAR))) throw new Error(`the unpacked registry has no ${JAR} (in ${tmp})`);
    if (!existsSync(jar)) renameSync(tmp, home);
    log(`schema registry ready to run in ${((Date.now() - started) / 1000).toFixed(1)}s${downloadedMb >= 1 ? ` (${downloadedMb.toFixed(0)} MB downloaded)` : ''}: ${home}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return jar;
}

/**
 * Starts the registry on 127.0.0.1:<port> with its data under <dataDir>/schema-registry,
 * and resolves once its Confluent API answers.
 */
export async function startSchemaRegistry(opts: StartSchemaRegistryOptions): Promise<SchemaRegistryProcess> {
  const { log, port } = opts;
  const url = `http://127.0.0.1:${port}`;
  if (await findConfluentApi(url, 1500)) throw new Error(`a schema registry already answers at ${url}; stop it or use another port`);
  const jar = await installSchemaRegistry(log);

  const dir = join(resolve(opts.dataDir), 'schema-registry');
  mkdirSync(join(dir, 'db'), { recursive: true });
  const logFile = join(dir, 'registry.log');
  const jvmArgs = [
    // A registry holds a few schemas: a small heap, and the quick compiler only, which
    // brings it up sooner on a machine of few cores.
    '-Xms32m',
    '-Xmx256m',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-XX:+ExitOnOutOfMemoryError',
    `-Dquarkus.http.port=${port}`,
    '-Dquarkus.http.host=127.0.0.1',
    `-Dapicurio.datasource.url=jdbc:h2:file:${join(dir, 'db', 'registry')}`,
    '-jar',
    jar,
  ];
  log(`starting the schema registry on ${url} (data ${join(dir, 'db')}, log ${logFile})...`);
  const out = openSync(logFile, 'a');
  const prefix = parentDeathPrefix();
  const [cmd, ...args] = [...prefix, javaBin(), ...jvmArgs];
  // Not detached: the JVM stays in our process group, so a terminal Ctrl-C reaches it too.
  const child = spawn(cmd ?? 'java', args, { stdio: ['ignore', out, out] });
  closeSync(out);

  const started = Date.now();
  const { stop } = await superviseJvm(child, {
    name: 'the schema registry',
    logHint: logFile,
    answers: async () => (await findConfluentApi(url, 1000)) !== undefined,
    failure: (why) => new Error(`${why} on ${url}\n--- tail of ${logFile} ---\n${fileTail(logFile) || '(empty)'}`),
    log,
    startTimeoutMs: START_TIMEOUT_MS,
    stopTimeoutMs: STOP_TIMEOUT_MS,
    pollMs: 250,
  });
  log(`schema registry ready on ${url} after ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return { url, stop };
}
