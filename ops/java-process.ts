// What the JVM children the project starts (the Kafka broker, the schema registry) share:
// finding `java`, keeping the last lines of their output for error messages, tying them to
// this process so they do not outlive it, and watching them start and stop.
import type { ChildProcess } from 'node:child_process';
import { existsSync, statSync, openSync, readSync, closeSync } from 'node:fs';
import { join } from 'node:path';

export function javaBin(): string {
  // Honour JAVA_HOME like Kafka's own scripts do; fall back to PATH.
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
}

/** Keep the last `max` lines of a stream-ish text source, for error messages. */
export class Tail {
  private lines: string[] = [];
  constructor(private readonly max: number) {}
  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.max) this.lines.shift();
  }
  text(): string {
    return this.lines.join('\n');
  }
}

/** Split a child's output into lines and hand each to `onLine`. */
export function forwardLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  if (!stream) return;
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (line.trim()) onLine(line);
    }
  });
  stream.on('end', () => {
    if (buf.trim()) onLine(buf);
    buf = '';
  });
}

/**
 * Last lines of a log file ('' when absent), without Java stack frames, which would
 * otherwise push the one line that explains a failed start out of view.
 */
export function fileTail(path: string, maxLines = 30, maxBytes = 256 * 1024): string {
  if (!existsSync(path)) return '';
  const size = statSync(path).size;
  const len = Math.min(size, maxBytes);
  const buf = Buffer.alloc(len);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buf, 0, len, size - len);
  } finally {
    closeSync(fd);
  }
  return buf
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() && !/^\s+(at |\.\.\. \d+ more)/.test(l))
    .slice(-maxLines)
    .join('\n');
}

/** Prefix that makes the JVM get SIGTERM when this Node process dies, even on SIGKILL (Linux, util-linux setpriv). */
let pdeathsigPrefix: string[] | undefined;
export function parentDeathPrefix(): string[] {
  if (pdeathsigPrefix) return pdeathsigPrefix;
  pdeathsigPrefix = [];
  if (process.platform === 'linux') {
    for (const p of ['/usr/bin/setpriv', '/bin/setpriv']) {
      if (existsSync(p)) {
        pdeathsigPrefix = [p, '--pdeathsig', 'TERM', '--'];
        break;
      }
    }
  }
  return pdeathsigPrefix;
}

export interface JvmSupervisor {
  /** Stops the JVM: SIGTERM, then SIGKILL after stopTimeoutMs. */
  stop(): Promise<void>;
}

/**
 * Watches a JVM child until it answers, then until it is stopped. `answers` is probed until
 * it is true: an exit, a spawn error or startTimeoutMs first fail the start with `failure`'s
 * text (the child's own output). Once started, an exit nobody asked for is logged: it would
 * otherwise show only as client timeouts.
 */
export async function superviseJvm(
  child: ChildProcess,
  opts: {
    name: string;
    /** Where to look when it went wrong. */
    logHint: string;
    answers: () => Promise<boolean>;
    failure: (why: string) => Error;
    log: (line: string) => void;
    startTimeoutMs: number;
    stopTimeoutMs: number;
    pollMs: number;
  },
): Promise<JvmSupervisor> {
  const { name, log } = opts;
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let ready = false;
  let stopping = false;
  const exitPromise = new Promise<void>((res) => {
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      if (ready && !stopping) log(`${name} exited unexpectedly (code ${String(code)}, signal ${String(signal)}); see ${opts.logHint}`);
      res();
    });
  });
  let spawnError: Error | undefined;
  child.on('error', (err: NodeJS.ErrnoException) => {
    spawnError = err.code === 'ENOENT' ? new Error(`\`java\` not found (Java 17+ is needed for ${name})`) : err;
  });
  // Last resort for exits that skip stop(): process.exit(), an uncaught exception. SIGTERM,
  // not SIGKILL: the JVM then shuts down cleanly on its own (a Kafka broker killed outright
  // makes the next start wait for its KRaft registration to expire).
  const killOnExit = (): void => {
    if (!exited) child.kill('SIGTERM');
  };
  process.on('exit', killOnExit);

  const stop = async (): Promise<void> => {
    process.off('exit', killOnExit);
    if (exited || child.exitCode !== null) return;
    stopping = true;
    child.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (!exited) {
        log(`${name} did not stop within ${opts.stopTimeoutMs / 1000}s; killing it`);
        child.kill('SIGKILL');
      }
    }, opts.stopTimeoutMs);
    await exitPromise;
    clearTimeout(timer);
  };

  const started = Date.now();
  let lastProgress = started;
  for (;;) {
    if (spawnError) {
      process.off('exit', killOnExit);
      throw spawnError;
    }
    if (exited) {
      process.off('exit', killOnExit);
      throw opts.failure(`${name} exited during startup (code ${String(exited.code)}, signal ${String(exited.signal)})`);
    }
    if (await opts.answers()) break;
    const now = Date.now();
    if (now - started > opts.startTimeoutMs) {
      await stop();
      throw opts.failure(`${name} did not answer within ${opts.startTimeoutMs / 1000}s`);
    }
    if (now - lastProgress >= 5000) {
      lastProgress = now;
      log(`  waiting for ${name} (${Math.round((now - started) / 1000)}s)...`);
    }
    // Wait a little, but wake up at once if the JVM dies.
    await Promise.race([exitPromise, new Promise((r) => setTimeout(r, opts.pollMs))]);
  }
  ready = true;
  return { stop };
}
