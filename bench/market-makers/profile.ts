// A CPU profile of this process (the service's main thread) while a step runs, through
// node:inspector, summed by function and by where the code lives: what a slow step spends
// its event loop on. The engine's own threads are not in it (time the main thread waits
// for them shows as idle).
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  ms: number;
  /** Self time (ms) per area, largest first. */
  areas: [string, number][];
  /** Self time (ms) per function, largest first. */
  functions: [string, number][];
}

/** Where a frame's code lives, coarsely: a package, a folder of this repository, or V8's own entries. */
function areaOf(frame: ProfileNode['callFrame']): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url);
  if (pkg) return pkg[1]!;
  if (frame.url.startsWith('node:')) return 'node internals';
  if (!frame.url.startsWith('file:')) return frame.url;
  // This repository's code by folder (api/resources/market-makers...).
  return path.relative(process.cwd(), path.dirname(fileURLToPath(frame.url))) || '.';
}

/** Runs `fn` under the profiler; writes the .cpuprofile (for Chrome's DevTools) to `file` when given. */
export async function profiled<T>(fn: () => Promise<T>, file?: string): Promise<{ result: T; summary: ProfileSummary }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  let result: T;
  let profile: CpuProfile;
  try {
    result = await fn();
  } finally {
    profile = ((await session.post('Profiler.stop')) as { profile: CpuProfile }).profile;
    session.disconnect();
  }
  if (file) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(profile));
  }
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // Stopping the profiler is sampled too (under inspector's post): not the step's time.
  const skip = new Set<number>();
  const mark = (id: number) => {
    skip.add(id);
    for (const c of byId.get(id)?.children ?? []) mark(c);
  };
  for (const n of profile.nodes) if (n.callFrame.functionName === 'post' && n.callFrame.url === 'node:inspector') mark(n.id);
  const self = new Map<number, number>();
  let skipped = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    if (skip.has(id)) skipped += ms;
    else self.set(id, (self.get(id) ?? 0) + ms);
  });
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, ms] of self) {
    const f = byId.get(id)!.callFrame;
    const area = areaOf(f);
    areas.set(area, (areas.get(area) ?? 0) + ms);
    const name = `${f.functionName || '(anonymous)'} ${f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : ''}`.trim();
    functions.set(name, (functions.get(name) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { result: result!, summary: { ms: (profile.endTime - profile.startTime) / 1000 - skipped, areas: sorted(areas), functions: sorted(functions) } };
}

/** The summary in a few lines: areas over 2 % of the time, the top functions. */
export function describeProfile(s: ProfileSummary, top = 12): string[] {
  const pct = (ms: number) => `${((100 * ms) / s.ms).toFixed(0)} %`;
  return [
    `main thread over ${(s.ms / 1000).toFixed(2)} s, by area: ${s.areas
      .filter(([, ms]) => ms / s.ms >= 0.02)
      .map(([a, ms]) => `${a} ${pct(ms)}`)
      .join(', ')}`,
    `top functions (self time): ${s.functions
      .filter(([f]) => f !== '(idle)')
      .slice(0, top)
      .map(([f, ms]) => `${f} ${ms.toFixed(0)} ms`)
      .join('; ')}`,
  ];
}
