import http from 'node:http';

/**
 * The HTTP client of bench/whole-results.ts, in a process of its own that loads nothing but
 * node:http: it takes commands over IPC (`WholeResultsCommand`), runs them over one kept-alive
 * connection, and answers with what it measured, its own CPU time included.
 *
 * Why a process of its own: reading 176 MB of pages allocates a Buffer per socket read, and
 * V8 answers that external memory with full collections. In the benchmark's own process, whose
 * heap holds the service's modules and DuckDB's baseline instance, each of them marked that
 * whole heap: `perf record` of the client during a walk through 25 pages put V8's marking and
 * sweeping in ~40% of its samples, 340–440 ms of CPU against 40–60 ms for a lean process reading
 * the same bytes from bare node:http (2026-11-23). That CPU was taken from the 2 cores the
 * service shares with it, and is no part of what the service costs.
 */

export type WholeResultsCommand =
  /** Every page through next_uri from `url`, reading `row_count` and `next_uri` of each. */
  | { kind: 'walk'; url: string; key: string }
  /** `url` fetched `times` times, one after the other. */
  | { kind: 'get'; url: string; key?: string; times?: number };

export interface Fetched {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: number;
  /** The first and last few kilobytes of the body. */
  head: string;
  tail: string;
  ms: number;
}

export interface WholeResultsAnswer {
  ms: number;
  /** Bytes of all answers. */
  bytes: number;
  /** The last answer of a `get`. */
  last?: Fetched;
  /** A walk's pages: each one's milliseconds, and the rows they held. */
  pages?: number[];
  rows?: number;
  /** This process's CPU milliseconds during the command. */
  cpuMs: number;
  error?: string;
}

const EDGE_BYTES = 4096;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** GET over the kept-alive connection, keeping only the body's edges. */
function get(url: string, key?: string): Promise<Fetched> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers = key ? { 'x-service-api-key': key } : {};
    const request = http.get(url, { agent, headers }, (response) => {
      let bytes = 0;
      let head = Buffer.alloc(0);
      let previous: Buffer | undefined;
      let last: Buffer | undefined;
      response.on('data', (chunk: Buffer) => {
        if (head.length < EDGE_BYTES)
          head = Buffer.concat([head, chunk.subarray(0, EDGE_BYTES - head.length)]);
        bytes += chunk.length;
        previous = last;
        last = chunk;
      });
      response.on('end', () => {
        const edge = Buffer.concat([previous ?? Buffer.alloc(0), last ?? Buffer.alloc(0)]);
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          bytes,
          head: head.toString('utf8'),
          tail: edge.subarray(Math.max(0, edge.length - EDGE_BYTES)).toString('utf8'),
          ms: performance.now() - started,
        });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

async function walk(first: string, key: string): Promise<Omit<WholeResultsAnswer, 'cpuMs'>> {
  const started = performance.now();
  let url: string | undefined = first;
  const pages: number[] = [];
  let bytes = 0;
  let rows = 0;
  while (url) {
    const page = await get(url, key);
    if (page.status !== 200) throw new Error(`${url}: ${page.status} ${page.head.slice(0, 300)}`);
    pages.push(page.ms);
    bytes += page.bytes;
    const count = /"row_count":(\d+)/.exec(page.tail) ?? /"row_count":(\d+)/.exec(page.head);
    if (!count) throw new Error(`${url}: no row_count in the page's edges`);
    rows += Number(count[1]);
    url = /"next_uri":"([^"]+)"/.exec(page.head)?.[1];
  }
  return { ms: performance.now() - started, bytes, pages, rows };
}

async function repeat(
  url: string,
  key: string | undefined,
  times: number,
): Promise<Omit<WholeResultsAnswer, 'cpuMs'>> {
  const started = performance.now();
  let last: Fetched | undefined;
  let bytes = 0;
  for (let i = 0; i < times; i++) {
    last = await get(url, key);
    bytes += last.bytes;
  }
  return { ms: performance.now() - started, bytes, ...(last ? { last } : {}) };
}

async function run(command: WholeResultsCommand): Promise<WholeResultsAnswer> {
  const cpu = process.cpuUsage();
  const done =
    command.kind === 'walk'
      ? await walk(command.url, command.key)
      : await repeat(command.url, command.key, command.times ?? 1);
  const used = process.cpuUsage(cpu);
  return { ...done, cpuMs: (used.user + used.system) / 1000 };
}

process.on('message', (command: WholeResultsCommand) => {
  run(command).then(
    (answer) => process.send?.(answer),
    (error: unknown) => process.send?.({ ms: 0, bytes: 0, cpuMs: 0, error: String(error) }),
  );
});
process.on('disconnect', () => {
  agent.destroy();
  process.exit(0);
});
