// Runs Maven for what the project fetches from Maven Central (the Kafka broker's jars, the
// schema registry's distribution), with progress a person can follow: files and megabytes
// done so far, and how far the file being downloaded has come.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { forwardLines, Tail } from './java-process.ts';

export interface MavenRun {
  pom: string;
  /** Goals and -D properties after `-B -f <pom>`. */
  args: string[];
  /** What is being fetched, for the progress lines ("Kafka jars"). */
  what: string;
  log: (line: string) => void;
}

export interface MavenResult {
  downloads: number;
  downloadedMb: number;
}

const HEARTBEAT_MS = 5_000;

/** Where Maven keeps a file it is downloading (`<local repo>/<path>.part`), when the local repository is the default one. */
function partFile(url: string): string | undefined {
  const i = url.indexOf('/maven2/');
  if (i < 0) return undefined;
  return join(os.homedir(), '.m2', 'repository', url.slice(i + '/maven2/'.length)) + '.part';
}

export async function runMaven(run: MavenRun): Promise<MavenResult> {
  const started = Date.now();
  const tail = new Tail(30);
  let downloads = 0;
  let downloadedKb = 0;
  let current: string | undefined;

  await new Promise<void>((resolvePromise, reject) => {
    let child: ChildProcess;
    try {
      // -B: no colours or prompts. Not -q: the "Downloaded from" lines drive the progress.
      child = spawn('mvn', ['-B', '-f', run.pom, ...run.args], { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    const onLine = (line: string): void => {
      tail.push(line);
      const start = /^\[INFO\] Downloading from [^:]+: (\S+)/.exec(line);
      if (start) current = start[1];
      const m = /^\[INFO\] Downloaded from [^:]+: (\S+) \(([\d.]+) (B|kB|MB)/.exec(line);
      if (m) {
        downloads += 1;
        const n = Number(m[2]);
        downloadedKb += m[3] === 'MB' ? n * 1024 : m[3] === 'kB' ? n : n / 1024;
        if (m[1] === current) current = undefined;
      }
    };
    forwardLines(child.stdout, onLine);
    forwardLines(child.stderr, onLine);
    // A heartbeat so a slow first download does not look like a hang.
    const timer = setInterval(() => {
      const secs = Math.round((Date.now() - started) / 1000);
      const part = current ? partFile(current) : undefined;
      const now = part && existsSync(part) ? `; ${(statSync(part).size / 2 ** 20).toFixed(1)} MB of ${current!.slice(current!.lastIndexOf('/') + 1)} so far` : '';
      run.log(`  still fetching ${run.what} (${secs}s, ${downloads} files / ${(downloadedKb / 1024).toFixed(1)} MB downloaded${now})...`);
    }, HEARTBEAT_MS);
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearInterval(timer);
      reject(err.code === 'ENOENT' ? new Error(`\`mvn\` not found on PATH: Maven 3.6+ is needed to fetch ${run.what}`) : err);
    });
    child.on('close', (code) => {
      clearInterval(timer);
      if (code === 0) resolvePromise();
      else reject(new Error(`Maven failed to fetch ${run.what} (exit ${String(code)}):\n${tail.text()}`));
    });
  });
  return { downloads, downloadedMb: downloadedKb / 1024 };
}
