import fs from 'node:fs';
import path from 'node:path';

/**
 * Where a `--cpu-prof` profile's main-thread time went: self time by function (with its
 * file and line) and by file, largest first. `npx tsx bench/cpu-profile.ts FILE.cpuprofile [N]`.
 * The profile samples only the main thread: DuckDB's threads are not in it (the benchmarks
 * print their CPU time from /proc beside it).
 */

/** A `--cpu-prof` file's shape (the parts the profile readers here use). */
export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function where(url: string): string {
  if (url === '') return '';
  const file = url.replace(/^file:\/\//, '');
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) return file.slice(modules + 'node_modules/'.length);
  return path.relative(process.cwd(), file);
}

export function summarize(profile: Profile, top = 25): string {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node);
  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, micros] of selfMicros) {
    const frame = byNode.get(id)?.callFrame;
    if (!frame) continue;
    // Waiting for I/O or DuckDB's threads: not the main thread's work.
    if (frame.functionName === '(idle)') {
      idle += micros;
      continue;
    }
    total += micros;
    const file = where(frame.url);
    let name = `${frame.functionName || '(anonymous)'}${file ? ` ${file}:${frame.lineNumber + 1}` : ''}`;
    // A builtin without a name (string joins, copies) is told by the function that called it.
    const caller = parents.get(id)?.callFrame;
    if (!frame.functionName && !file && caller)
      name += ` in ${caller.functionName || '(anonymous)'} ${where(caller.url)}:${caller.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    const group =
      file === '' ? frame.functionName : file.startsWith('node:') ? file : (file.split('/')[0] ?? file);
    byFile.set(group, (byFile.get(group) ?? 0) + micros);
  }
  const lines = [
    `profile: ${((profile.endTime - profile.startTime) / 1e6).toFixed(2)} s, main thread busy ${(total / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s`,
  ];
  const table = (title: string, entries: Map<string, number>) => {
    lines.push('', title);
    for (const [name, micros] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      lines.push(
        `${(micros / 1000).toFixed(0).padStart(8)} ms ${((100 * micros) / total).toFixed(1).padStart(5)}%  ${name}`,
      );
    }
  };
  table('self time by function', byFunction);
  table('self time by package or file', byFile);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: npx tsx bench/cpu-profile.ts FILE.cpuprofile [N]\n');
    process.exit(2);
  }
  console.log(summarize(JSON.parse(fs.readFileSync(file, 'utf8')) as Profile, Number(top ?? 25)));
}
