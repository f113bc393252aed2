import fs from 'node:fs/promises';
import path from 'node:path';
import { ulid } from 'ulid';
import type { Session, SqlValue } from '../storage/database.js';
import { quoteLiteral } from '../storage/sql.js';
import type { ResultFormat } from './result-rows.js';

/**
 * A page's rows written by DuckDB into temporary files, so that a large page never passes
 * through JavaScript strings: DuckDB renders the rows (one VARCHAR per row, from
 * row-rendering) and its CSV writer, with quoting off, writes each followed by the page's
 * separator, `,` after a JSON object or LF after a CSV line. The server then sends the
 * files' bytes as they are, one after the other, less the separator after the last JSON
 * object.
 *
 * Why: a 41,666-row JSON page (7 MB) handed to JavaScript as one string cost more on the
 * main thread than DuckDB's rendering (UTF-8 decoding, Buffer.from, Buffer.byteLength and
 * the garbage of each), and a whole 1,000,000-row CSV held 100 MB of strings at once:
 * RSS grew by 830–890 MB while sending it (bench/whole-results.ts, 2026-11-23).
 */

export interface RowsFile {
  /** The files as DuckDB wrote them, in order, and their sizes. */
  files: readonly { path: string; size: number }[];
  /** The bytes to send: the files' bytes, less the JSON separator after the last row. */
  bytes: number;
}

/** Bytes at the end of a file that are not rows: the `,` after the last JSON object. */
function trailingBytes(format: ResultFormat): number {
  return format === 'json' ? 1 : 0;
}

/**
 * `select` must have one VARCHAR column, the rendered row. DuckDB keeps the order of the
 * SELECT's rows in the file (its ORDER BY, or the table's own order without one, since
 * `preserve_insertion_order` is on), and writes the file from its start to its end.
 * `USE_TMP_FILE false`: DuckDB writes into the file there, even when it exists, instead of
 * writing another and renaming it over (what it does by default for a file that exists).
 */
function copyRows(select: string, file: string, format: ResultFormat): string {
  const separator = format === 'json' ? `','` : `E'\\n'`;
  return `COPY (${select}) TO ${quoteLiteral(file)} (FORMAT csv, HEADER false, QUOTE '', ESCAPE '', NEW_LINE ${separator}, USE_TMP_FILE false)`;
}

function rowsFileName(tmpDir: string, format: ResultFormat): string {
  return path.join(tmpDir, `rows-${ulid()}.${format === 'json' ? 'jsonl' : 'csv'}`);
}

function writtenFile(file: string, size: number, format: ResultFormat): RowsFile {
  return { files: [{ path: file, size }], bytes: Math.max(0, size - trailingBytes(format)) };
}

/**
 * Writes `select`'s rows into a new file. `onWorkers`: on DuckDB's worker threads only
 * (Session.runOnWorkers), for a page written while another one is.
 */
export async function writeRowsFile(
  session: Session,
  select: string,
  params: readonly SqlValue[],
  format: ResultFormat,
  tmpDir: string,
  onWorkers = false,
): Promise<RowsFile> {
  const file = rowsFileName(tmpDir, format);
  try {
    const copy = copyRows(select, file, format);
    await (onWorkers ? session.runOnWorkers(copy, params) : session.run(copy, params));
    const { size } = await fs.stat(file);
    return writtenFile(file, size, format);
  } catch (error) {
    await unlinkIfThere(file);
    throw error;
  }
}

/**
 * A file DuckDB is writing now, whose rows can be sent while it writes the rest
 * (streamed-answer.ts reads it as it grows). The file is created empty before DuckDB opens
 * it, so that a reader may open it at once and reads the very file DuckDB writes.
 */
export interface RowsBeingWritten {
  path: string;
  /** Settles once the file exists. */
  created: Promise<void>;
  /** The file as written, once DuckDB is done; rejects, the file removed, if the statement fails. */
  written: Promise<RowsFile>;
  /** Bytes at the file's end that are not rows (sent by no reader). */
  trailing: number;
}

/** Starts writing `select`'s rows into a new file: `run` runs the COPY on a connection of its own. */
export function startRowsFile(
  run: (sql: string, params: readonly SqlValue[]) => Promise<void>,
  select: string,
  params: readonly SqlValue[],
  format: ResultFormat,
  tmpDir: string,
): RowsBeingWritten {
  const file = rowsFileName(tmpDir, format);
  const created = fs.writeFile(file, '', { flag: 'wx' });
  const written = (async () => {
    try {
      await created;
      await run(copyRows(select, file, format), params);
      const { size } = await fs.stat(file);
      return writtenFile(file, size, format);
    } catch (error) {
      await unlinkIfThere(file);
      throw error;
    }
  })();
  // Whoever reads the rows sees a failure; these two are only waited for.
  created.catch(() => undefined);
  written.catch(() => undefined);
  return { path: file, created, written, trailing: trailingBytes(format) };
}

/**
 * How often a reader looks again at a file that has not grown (see streamed-answer.ts). A
 * plain timer, not a race against `written`: each race would leave a reaction on `written`
 * until it settles, thousands over a long part; the end is noticed at most this much later.
 */
const GROWTH_POLL_MS = 2;

export function untilGrown(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, GROWTH_POLL_MS));
}

/** What is known of a file being written: its final form, or its statement's failure. */
export function watchWritten(rows: RowsBeingWritten): { written?: RowsFile; failed?: { error: unknown } } {
  const state: { written?: RowsFile; failed?: { error: unknown } } = {};
  rows.written.then(
    (file) => {
      state.written = file;
    },
    (error: unknown) => {
      state.failed = { error };
    },
  );
  return state;
}

/**
 * Settles once the file holds a row, or is written: rejects if its statement fails first.
 * What fails before any row (a table gone, a refused statement) can still be an answer of its own.
 */
export async function firstRows(rows: RowsBeingWritten): Promise<void> {
  const state = watchWritten(rows);
  await rows.created;
  const handle = await fs.open(rows.path, 'r');
  try {
    while (!state.written && !state.failed && (await handle.stat()).size <= rows.trailing) await untilGrown();
  } finally {
    await handle.close();
  }
  if (state.failed) throw state.failed.error;
}

/** Consecutive parts of one page, written separately, as one. */
export function joinRowsFiles(parts: readonly RowsFile[], format: ResultFormat): RowsFile {
  const files = parts.flatMap((part) => part.files);
  const size = files.reduce((sum, file) => sum + file.size, 0);
  return { files, bytes: Math.max(0, size - trailingBytes(format)) };
}

/** Files of at most `maxBytes` are read into memory (and removed): small pages are kept as bytes. */
export async function smallIntoMemory(rows: RowsFile, maxBytes: number): Promise<Buffer | RowsFile> {
  if (rows.bytes > maxBytes) return rows;
  try {
    const contents = await Promise.all(rows.files.map((file) => fs.readFile(file.path)));
    return Buffer.concat(contents).subarray(0, rows.bytes);
  } finally {
    await removeRows(rows);
  }
}

/**
 * One unlink per file: `fs.rm` first runs lstat on the main thread, which took 150 ms of
 * it over 120 files in a profile of bench/whole-results.ts.
 */
export async function removeRows(rows: RowsFile): Promise<void> {
  await Promise.all(rows.files.map((file) => unlinkIfThere(file.path)));
}

/**
 * Never rejects: callers remove files on their way out (a client gone, a timer), where a
 * rejection would go unhandled. A file that cannot be removed stays in DATA_DIR/tmp, which
 * the next start empties.
 */
async function unlinkIfThere(file: string): Promise<void> {
  await fs.unlink(file).catch(() => undefined);
}
