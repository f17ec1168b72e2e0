// Runs a real single-node Apache Kafka broker (KRaft, combined broker+controller)
// for development, tests and the demo. The jars come from Maven Central through
// ops/kafka/pom.xml, so the only prerequisites are `java` (17+) and `mvn`.
//
// Layout under <dataDir>/kafka/:
//   classpath.txt / classpath.sha256  resolved classpath, and the pom hash it belongs to
//   cluster.id                        generated once, reused by every later format
//   server.properties                 rewritten on each start (ports may change)
//   data/                             log.dirs (meta.properties marks it formatted)
//   logs/server.log                   broker log (see ops/kafka/log4j2.yaml)
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join, resolve, delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { fileTail, forwardLines, javaBin, parentDeathPrefix, superviseJvm, Tail } from './java-process.ts';
import { runMaven } from './maven.ts';

export interface KafkaProcess {
  brokers: string;
  stop(): Promise<void>;
}

export interface StartKafkaOptions {
  dataDir: string;
  /** PLAINTEXT listener port; default 9092. */
  port: number;
  /** KRaft controller listener port; default port + 1. */
  controllerPort?: number;
  log: (line: string) => void;
}

const BROKER_MAIN = 'kafka.Kafka';
const STORAGE_TOOL_MAIN = 'kafka.tools.StorageTool';
const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 30_000;

/** ops/kafka/<file>: next to this module when run from source (tsx), else under cwd (e.g. after tsc to dist/). */
function opsKafkaFile(name: string): string {
  const candidates = [
    join(dirname(fileURLToPath(import.meta.url)), 'kafka', name),
    join(process.cwd(), 'ops', 'kafka', name),
  ];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`ops/kafka/${name} not found (looked in ${candidates.join(', ')})`);
  return found;
}

function kafkaDir(dataDir: string): string {
  const dir = join(resolve(dataDir), 'kafka');
  mkdirSync(dir, { recursive: true });
  return dir;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Resolve the broker's runtime classpath with Maven and cache it under <dataDir>/kafka/.
 * Maven runs again only when ops/kafka/pom.xml changed (hash mismatch) or a cached jar
 * disappeared (e.g. ~/.m2 was wiped).
 */
export async function resolveKafkaClasspath(dataDir: string, log: (line: string) => void): Promise<string> {
  const dir = kafkaDir(dataDir);
  const pom = opsKafkaFile('pom.xml');
  const hash = sha256(readFileSync(pom, 'utf8'));
  const cpFile = join(dir, 'classpath.txt');
  const hashFile = join(dir, 'classpath.sha256');

  if (existsSync(cpFile) && existsSync(hashFile) && readFileSync(hashFile, 'utf8').trim() === hash) {
    const cp = readFileSync(cpFile, 'utf8').trim();
    if (cp && cp.split(delimiter).every((jar) => existsSync(jar))) return cp;
  }

  log('resolving Kafka jars with Maven (first run downloads ~65 MB)...');
  const started = Date.now();
  const tmpOut = join(dir, `classpath.txt.${process.pid}.tmp`);
  const { downloads, downloadedMb } = await runMaven({
    pom,
    args: ['dependency:build-classpath', `-Dmdep.outputFile=${tmpOut}`],
    what: 'the Kafka jars',
    log,
  });
  if (!existsSync(tmpOut)) throw new Error(`Maven wrote no classpath to ${tmpOut}`);

  const cp = readFileSync(tmpOut, 'utf8').trim();
  renameSync(tmpOut, cpFile);
  writeFileSync(hashFile, `${hash}\n`);
  log(
    `Kafka classpath resolved in ${((Date.now() - started) / 1000).toFixed(1)}s ` +
      `(${cp.split(delimiter).length} jars${downloads ? `, ${downloadedMb.toFixed(1)} MB downloaded` : ''})`,
  );
  return cp;
}

/**
 * True when a Kafka broker answers at `brokers` (comma-separated host:port) within `timeoutMs`.
 * Uses a throw-away kafkajs admin with retries off and logging off, so probing a closed port
 * prints nothing.
 */
export async function kafkaAnswers(brokers: string, timeoutMs = 3000): Promise<boolean> {
  const kafka = new Kafka({
    clientId: 'mm-metrics-probe',
    brokers: brokers.split(',').map((b) => b.trim()).filter(Boolean),
    logLevel: logLevel.NOTHING,
    connectionTimeout: Math.min(timeoutMs, 3000),
    requestTimeout: timeoutMs,
    retry: { retries: 0 },
  });
  const admin = kafka.admin({ retry: { retries: 0 } });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((res) => {
    timer = setTimeout(() => res(false), timeoutMs);
  });
  const probe = (async (): Promise<boolean> => {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length > 0;
  })().catch(() => false);
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
    await admin.disconnect().catch(() => undefined);
  }
}

/** A KRaft cluster id: 16 random bytes, base64url without padding (what `kafka-storage random-uuid` prints). */
function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    // Kafka avoids ids starting with '-' (they look like CLI flags); do the same.
    if (!id.startsWith('-')) return id;
  }
}

function serverProperties(o: { logDirs: string; port: number; controllerPort: number }): string {
  return [
    '# Written by ops/kafka.ts on every start; edits here are overwritten.',
    'process.roles=broker,controller',
    'node.id=1',
    // Static voter list (not --standalone/dynamic quorum): nothing about the controller
    // endpoint is persisted at format time, so the ports can change between runs.
    `controller.quorum.voters=1@127.0.0.1:${o.controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${o.port},CONTROLLER://127.0.0.1:${o.controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${o.port}`,
    'listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'inter.broker.listener.name=PLAINTEXT',
    'controller.listener.names=CONTROLLER',
    `log.dirs=${o.logDirs}`,
    'num.partitions=1',
    'default.replication.factor=1',
    'min.insync.replicas=1',
    'offsets.topic.replication.factor=1',
    // One partition for __consumer_offsets keeps a cold start quick on a 2-core box.
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.num.partitions=1',
    'transaction.state.log.min.isr=1',
    'share.coordinator.state.topic.replication.factor=1',
    'share.coordinator.state.topic.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=false',
    'delete.topic.enable=true',
    // Dev broker: keep a week, small segments so retention can actually drop data.
    'log.retention.hours=168',
    'log.segment.bytes=67108864',
    'num.network.threads=2',
    'num.io.threads=4',
    '',
  ].join('\n');
}

/** Run a short-lived JVM (the StorageTool) and fail with its output when it exits non-zero. */
async function runJava(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const tail = new Tail(40);
  return new Promise<string>((res, rej) => {
    const child = spawn(javaBin(), args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    forwardLines(child.stdout, (l) => tail.push(l));
    forwardLines(child.stderr, (l) => tail.push(l));
    child.on('error', (err: NodeJS.ErrnoException) =>
      rej(err.code === 'ENOENT' ? new Error('`java` not found (Java 17+ is needed for the Kafka broker)') : err),
    );
    child.on('close', (code) => {
      if (code === 0) res(tail.text());
      else rej(new Error(`${args[args.length - 1] ?? 'java'} failed (exit ${String(code)}):\n${tail.text()}`));
    });
  });
}

/**
 * Right after start the broker still creates/loads __consumer_offsets and __transaction_state. kafkajs retries through that but logs each retriable answer ("The group coordinator is
 * not available", "The coordinator is loading...") at ERROR level, which looks like a failure.
 * Waiting for the group and transaction coordinators here, with kafkajs logging off, keeps the callers' logs clean.
 */
async function warmUp(brokers: string): Promise<void> {
  const kafka = new Kafka({
    clientId: 'mm-metrics-warmup',
    brokers: [brokers],
    logLevel: logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 2000 },
  });
  const admin = kafka.admin();
  // Starting (and aborting an empty) transaction makes kafkajs send FindCoordinator(transaction),
  // which creates and loads __transaction_state, then InitProducerId; connect() alone sends neither.
  const producer = kafka.producer({ idempotent: true, transactionalId: 'mm-metrics-warmup', maxInFlightRequests: 1 });
  try {
    await admin.connect();
    // FindCoordinator for any group id makes the broker create and load __consumer_offsets.
    await admin.describeGroups(['mm-metrics-warmup']);
    await producer.connect();
    const tx = await producer.transaction();
    await tx.abort(); // nothing was sent, so kafkajs sends no EndTxn
  } catch {
    // Best effort only: a real problem will surface, with kafkajs' own retries, in the caller.
  } finally {
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * Start a single-node KRaft broker under <dataDir>/kafka and resolve once it answers on
 * 127.0.0.1:<port>. Formats the storage on first use only.
 */
export async function startKafka(opts: StartKafkaOptions): Promise<KafkaProcess> {
  const { log } = opts;
  const port = opts.port || 9092;
  const controllerPort = opts.controllerPort ?? port + 1;
  const brokers = `127.0.0.1:${port}`;
  const dir = kafkaDir(opts.dataDir);
  const logDirs = join(dir, 'data');
  const logsDir = join(dir, 'logs');
  mkdirSync(logDirs, { recursive: true });
  mkdirSync(logsDir, { recursive: true });

  if (await kafkaAnswers(brokers, 1500)) {
    // Someone else's broker would make our JVM die with "Address already in use" after a
    // long wait; say it plainly instead.
    throw new Error(`a Kafka broker already answers at ${brokers}; stop it or use another port`);
  }

  const cp = await resolveKafkaClasspath(opts.dataDir, log);

  const propsFile = join(dir, 'server.properties');
  writeFileSync(propsFile, serverProperties({ logDirs, port, controllerPort }));

  const log4jConfig = opsKafkaFile('log4j2.yaml');
  const jvmCommon = [
    `-Dlog4j2.configurationFile=${log4jConfig}`,
    `-Dkafka.logs.dir=${logsDir}`,
    '-Djava.awt.headless=true',
  ];
  // The classpath goes through the environment: ~50 absolute jar paths in ~/.m2 can get
  // long, and CLASSPATH keeps `ps` output readable.
  const env: NodeJS.ProcessEnv = { ...process.env, CLASSPATH: cp };

  if (!existsSync(join(logDirs, 'meta.properties'))) {
    const idFile = join(dir, 'cluster.id');
    if (!existsSync(idFile)) writeFileSync(idFile, `${newClusterId()}\n`);
    const clusterId = readFileSync(idFile, 'utf8').trim();
    log(`formatting Kafka storage in ${logDirs} (cluster id ${clusterId})...`);
    await runJava([...jvmCommon, '-Xmx256m', STORAGE_TOOL_MAIN, 'format', '-t', clusterId, '-c', propsFile], env);
  }

  log(`starting Kafka broker on ${brokers} (controller 127.0.0.1:${controllerPort}, log ${join(logsDir, 'server.log')})...`);
  const jvmArgs = [
    '-Xms256m',
    '-Xmx768m',
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-XX:+ExitOnOutOfMemoryError',
    ...jvmCommon,
    BROKER_MAIN,
    propsFile,
  ];
  const prefix = parentDeathPrefix();
  const [cmd, ...args] = prefix.length ? [...prefix, javaBin(), ...jvmArgs] : [javaBin(), ...jvmArgs];
  // Not detached: the JVM stays in our process group, so a terminal Ctrl-C reaches it too.
  const child = spawn(cmd ?? 'java', args, { stdio: ['ignore', 'pipe', 'pipe'], env });

  const outTail = new Tail(20);
  // stdout carries only WARN+ (see log4j2.yaml); stderr is JVM-level trouble. Both are worth showing.
  forwardLines(child.stdout, (l) => {
    outTail.push(l);
    log(`[kafka] ${l}`);
  });
  forwardLines(child.stderr, (l) => {
    outTail.push(l);
    log(`[kafka] ${l}`);
  });

  const serverLog = join(logsDir, 'server.log');
  const started = Date.now();
  const { stop } = await superviseJvm(child, {
    name: 'the Kafka broker',
    logHint: serverLog,
    answers: () => kafkaAnswers(brokers, 2000),
    failure: (why) =>
      new Error(`${why} on ${brokers}\n--- broker output ---\n${outTail.text() || '(none)'}\n--- tail of ${serverLog} ---\n${fileTail(serverLog) || '(empty)'}`),
    log,
    startTimeoutMs: START_TIMEOUT_MS,
    stopTimeoutMs: STOP_TIMEOUT_MS,
    pollMs: 500,
  });
  await warmUp(brokers);
  log(`Kafka broker ready on ${brokers} after ${((Date.now() - started) / 1000).toFixed(1)}s`);

  return { brokers, stop };
}
