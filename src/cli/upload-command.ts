import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { validateTableName } from '../tables/table-name.js';
import { CliError, EXIT } from './exit-codes.js';
import type { ProgramOutput } from './program-output.js';

/**
 * `upload FILE`: sends a file to a running service's upload operation as its body (text/csv,
 * NDJSON or Parquet, chosen by the file's extension), streamed from disk whatever its size,
 * with a progress bar on stderr (bytes, rate, time left; a line every two seconds when stderr
 * is not a terminal), and prints the service's answer on stdout.
 */

const CONTENT_TYPES: Record<string, string> = {
  '.csv': 'text/csv',
  '.parquet': 'application/vnd.apache.parquet',
  '.ndjson': 'application/x-ndjson',
  '.jsonl': 'application/x-ndjson',
};

interface UploadCommandOptions {
  table?: string;
  description?: string;
  private?: boolean;
  strict?: boolean;
  url: string;
  key?: string;
  dataDir?: string;
}

/** The key: --key, SERVICE_API_KEY, or the local key of a first start in the data directory. */
function keyOf(options: UploadCommandOptions): string {
  if (options.key) return options.key;
  if (process.env.SERVICE_API_KEY) return process.env.SERVICE_API_KEY;
  const file = path.join(options.dataDir ?? process.env.DATA_DIR ?? './data', 'dev-api-key.txt');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    throw new CliError(
      `no API key: give --key KEY (or set SERVICE_API_KEY); ${file} does not exist`,
      EXIT.usage,
    );
  }
}

/** The table name from the file's name: `Trades 2024.csv` is `trades_2024`. */
function tableOf(file: string, given: string | undefined): string {
  const name =
    given ??
    path
      .basename(file, path.extname(file))
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_');
  try {
    return validateTableName(name, 'table name');
  } catch (error) {
    throw new CliError(
      `${(error as Error).message}; give one with --table NAME${given ? '' : ` (taken from the file name ${path.basename(file)})`}`,
      EXIT.usage,
    );
  }
}

/** Counts the bytes on their way to the request, for the bar. */
class Counter extends Transform {
  sent = 0;
  constructor(private readonly onBytes: (sent: number) => void) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.sent += chunk.length;
    this.onBytes(this.sent);
    callback(null, chunk);
  }
}

const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

function progressBar(): SingleBar {
  return new SingleBar({
    format: 'uploading [{bar}] {percentage}% | {sentMB} of {totalMB} | {rate} | ETA {eta_formatted}',
    barsize: 30,
    hideCursor: true,
    noTTYOutput: true,
    notTTYSchedule: 2000,
    etaBuffer: 50,
    stream: process.stderr,
  });
}

interface Answer {
  status: number;
  body: string;
}

/** POSTs the file to `target`, streamed; resolves with the answer even when the service answered early. */
function send(
  target: URL,
  file: string,
  size: number,
  headers: Record<string, string>,
  bar: SingleBar,
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(target, {
      method: 'POST',
      // No keep-alive: the command exits once it has the answer.
      agent: false,
      headers: { ...headers, 'content-length': String(size) },
    });
    let answered = false;
    request.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    // An early answer (a 413, a refused key) may cut the body short: the answer is what counts.
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
    const counter = new Counter((sent) => {
      const seconds = (performance.now() - started) / 1000;
      bar.update(sent, {
        sentMB: megabytes(sent),
        rate: seconds > 0 ? `${(sent / 1e6 / seconds).toFixed(1)} MB/s` : '',
      });
    });
    fs.createReadStream(file, { highWaterMark: 1 << 20 })
      .on('error', reject)
      .pipe(counter)
      .pipe(request);
  });
}

async function upload(file: string, options: UploadCommandOptions, output: ProgramOutput): Promise<void> {
  const type = CONTENT_TYPES[path.extname(file).toLowerCase()];
  if (!type) {
    throw new CliError(
      `cannot tell the format of ${file} from its extension; name it .csv, .parquet, .ndjson or .jsonl`,
      EXIT.usage,
    );
  }
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch {
    throw new CliError(`cannot read ${file}`, EXIT.usage);
  }
  let target: URL;
  try {
    target = new URL('/v1/table/upload/csv', options.url);
  } catch {
    throw new CliError(
      `--url ${JSON.stringify(options.url)} is not a URL such as http://127.0.0.1:8080`,
      EXIT.usage,
    );
  }
  target.searchParams.set('table_name', tableOf(file, options.table));
  if (options.description !== undefined) target.searchParams.set('description', options.description);
  if (options.private) target.searchParams.set('is_private', 'true');
  if (options.strict) target.searchParams.set('strict', 'true');
  const headers = { 'content-type': type, 'x-service-api-key': keyOf(options) };
  const bar = progressBar();
  bar.start(size, 0, { sentMB: megabytes(0), totalMB: megabytes(size), rate: '' });
  let answer: Answer;
  try {
    answer = await send(target, file, size, headers, bar);
  } catch (error) {
    bar.stop();
    throw new CliError(`could not reach ${target.origin}: ${(error as Error).message}`, EXIT.failure);
  }
  bar.stop();
  if (answer.status === 200) {
    output.writeOut(`${answer.body}\n`);
    return;
  }
  let message = answer.body;
  try {
    message = (JSON.parse(answer.body) as { error?: string }).error ?? answer.body;
  } catch {
    // Not JSON: shown as it came.
  }
  throw new CliError(`the service answered ${answer.status}: ${message}`, EXIT.failure);
}

export function addUploadCommand(program: Command, output: ProgramOutput): void {
  program
    .command('upload')
    .description(
      'send a .csv, .parquet or .ndjson/.jsonl file to a running service as a table (streamed, with progress)',
    )
    .argument('<file>', 'the file to upload')
    .option('--table <name>', 'table name (stored as dataset_<name>); default: from the file name')
    .option('--description <text>', 'the table description')
    .option('--private', 'a private table (needs a premium key)')
    .option('--strict', 'refuse the upload rather than widen a column to varchar')
    .option('--url <url>', 'the service', `http://127.0.0.1:${process.env.PORT ?? '8080'}`)
    .option('--key <key>', 'API key (default: SERVICE_API_KEY, else DATA_DIR/dev-api-key.txt)')
    .option('--data-dir <dir>', 'where to find dev-api-key.txt when no key is given')
    .action((file: string, options: UploadCommandOptions) => upload(file, options, output));
}
