// What the JVM children the project starts (the Kafka broker, the schema registry) share:
// finding `java`, keeping the last lines of their output for error messages, and tying
// them to this process so they do not outlive it.
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
