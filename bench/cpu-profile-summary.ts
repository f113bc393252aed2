import fs from 'node:fs';
import type { Profile, ProfileNode } from './cpu-profile.js';

/**
 * Where a server's main thread spent its time under load, from a `--cpu-prof` profile (as
 * `bench/serving-cpu.ts --profile DIR` writes): self time by category, the top functions by
 * self time, and the service's own functions by inclusive time. Only the load is counted:
 * the samples after the profile's last idle second (serving-cpu idles 2 s before each load),
 * so start-up is left out. Built-in functions without a script (JSON.stringify, a hash) are
 * counted in the category of the JavaScript that called them.
 *
 *   npx tsx bench/cpu-profile-summary.ts PROFILE.cpuprofile [REQUESTS]
 *
 * With REQUESTS (the requests answered in the load), times are also given in µs per request.
 * `bench/cpu-profile.ts` shows a whole profile by function and by file instead.
 */

const [file, requestsArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: cpu-profile-summary PROFILE.cpuprofile [REQUESTS]\n');
  process.exit(2);
}
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const requests = requestsArg ? Number(requestsArg) : undefined;

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

function category(url: string, name: string): string | undefined {
  if (name === '(garbage collector)') return 'GC';
  if (name === '(program)') return 'V8/native, unattributed ((program))';
  if (name === '(idle)') return 'idle';
  if (name === '(root)') return 'root';
  if (url === '') return undefined; // A built-in: counted with its caller.
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (module) {
    if (['express', 'router', 'path-to-regexp', 'finalhandler', 'send', 'qs'].includes(module))
      return `express (${module})`;
    return `library ${module}`;
  }
  const ours = /\/src\/(.+?)\.ts/.exec(url)?.[1];
  if (ours) return `service src/${ours}`;
  if (url.startsWith('node:')) {
    const internal = url.replace(/^node:(internal\/)?/, '');
    if (/^_http|^http/.test(internal)) return 'node http';
    if (/^(net|stream|streams\/|timers|async_hooks|process\/task_queues|events)/.test(internal))
      return 'node net/stream/events';
    return `node ${internal.split('/')[0]}`;
  }
  return `other ${url}`;
}

function categoryOf(id: number): string {
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const node = byId.get(at) as ProfileNode;
    const found = category(node.callFrame.url, node.callFrame.functionName);
    if (found) return found;
  }
  return 'native';
}

// The load: the samples after the last stretch of at least a second without work.
const times: number[] = [];
let now = 0;
for (const delta of profile.timeDeltas) {
  now += delta;
  times.push(now);
}
const idleId = profile.nodes.find((n) => n.callFrame.functionName === '(idle)')?.id;
let start = 0;
let idleSince: number | undefined;
for (let i = 0; i < profile.samples.length; i++) {
  if (profile.samples[i] === idleId) {
    idleSince ??= times[i] as number;
    continue;
  }
  if (idleSince !== undefined && (times[i] as number) - idleSince >= 1e6) start = i;
  idleSince = undefined;
}

const self = new Map<number, number>();
let busy = 0;
let idle = 0;
for (let i = start; i < profile.samples.length; i++) {
  const id = profile.samples[i] as number;
  // A sample's time is the delta to the next one.
  const micros = (profile.timeDeltas[i + 1] ?? 0) as number;
  if (id === idleId) {
    idle += micros;
    continue;
  }
  busy += micros;
  self.set(id, (self.get(id) ?? 0) + micros);
}

const categories = new Map<string, number>();
const functions = new Map<string, number>();
const inclusive = new Map<string, number>();
const label = (node: ProfileNode) =>
  `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*\/(node_modules|src)\//, '$1/')}:${node.callFrame.lineNumber + 1}`;
for (const [id, micros] of self) {
  const cat = categoryOf(id);
  categories.set(cat, (categories.get(cat) ?? 0) + micros);
  const node = byId.get(id) as ProfileNode;
  functions.set(label(node), (functions.get(label(node)) ?? 0) + micros);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const frame = byId.get(at) as ProfileNode;
    if (!/\/src\/.+\.ts$/.test(frame.callFrame.url) || frame.callFrame.url.includes('node_modules')) continue;
    const name = label(frame);
    if (seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + micros);
  }
}

const show = (micros: number) =>
  `${(micros / 1000).toFixed(0).padStart(6)} ms ${((100 * micros) / busy).toFixed(1).padStart(5)}%` +
  (requests ? ` ${(micros / requests).toFixed(1).padStart(6)} µs/req` : '');
const top = (map: Map<string, number>, count: number) =>
  [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, count);

console.log(
  `load window: ${((busy + idle) / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s` +
    (requests ? `, ${requests} requests: ${(busy / requests).toFixed(1)} µs/request busy` : ''),
);
console.log('\nself time by category (built-ins counted with their caller):');
for (const [name, micros] of top(categories, 40)) console.log(`${show(micros)}  ${name}`);
console.log('\ntop functions by self time:');
for (const [name, micros] of top(functions, 30)) console.log(`${show(micros)}  ${name}`);
console.log("\nthe service's own functions by inclusive time:");
for (const [name, micros] of top(inclusive, 25)) console.log(`${show(micros)}  ${name}`);
