import fs from 'node:fs/promises';
import path from 'node:path';
import { ulid } from 'ulid';
import type { Database, Session, SqlValue } from '../storage/database.js';
import { quoteLiteral } from '../storage/sql.js';
import { FileBody, type RowsBeingWritten, unlinkIfThere } from './page-body.js';
import type { PageQuery } from './page-query.js';
import type { FileFormat } from './result-format.js';
import { readResults } from './results-reader.js';
import { GROWTH_POLL_MS } from './tuning.js';

/**
 * A page's rows written by DuckDB into a temporary file (`COPY (select) TO file`, with the
 * format's options), so that a large page never passes through JavaScript strings: the
 * server sends the file's bytes as they are, less the format's trailing bytes.
 *
 * Why: a 41,666-row JSON page (7 MB) handed to JavaScript as one string cost more on the
 * main thread than DuckDB's rendering (UTF-8 decoding, Buffer.from, Buffer.byteLength and
 * the garbage of each), and a whole 1,000,000-row CSV held 100 MB of strings at once:
 * RSS grew by 830–890 MB while sending it (bench/whole-results.ts, 2026-11-23).
 *
 * DuckDB keeps the order of the SELECT's rows in the file (its ORDER BY, or the table's own
 * order without one, since `preserve_insertion_order` is on), and writes the file from its
 * start to its end.
 */

function copyTo(query: PageQuery, file: string, format: FileFormat): string {
  return `COPY (${query.select}) TO ${quoteLiteral(file)} (${format.copyOptions})`;
}

function fileName(tmpDir: string, format: FileFormat): string {
  return path.join(tmpDir, `rows-${ulid()}.${format.extension}`);
}

async function writtenFile(file: string, format: FileFormat): Promise<FileBody> {
  const { size } = await fs.stat(file);
  return FileBody.written([{ path: file, size }], format.trailingBytes);
}

/**
 * Writes the query's rows into a new file. `onWorkers`: on DuckDB's worker threads only
 * (Session.runOnWorkers), for a page written while another one is.
 */
export async function writeRowsFile(
  session: Session,
  query: PageQuery,
  format: FileFormat,
  tmpDir: string,
  onWorkers = false,
): Promise<FileBody> {
  const file = fileName(tmpDir, format);
  try {
    const copy = copyTo(query, file, format);
    await (onWorkers ? session.runOnWorkers(copy, query.params) : session.run(copy, query.params));
    return await writtenFile(file, format);
  } catch (error) {
    await unlinkIfThere(file);
    throw error;
  }
}

/**
 * Starts writing the query's rows into a new file, which a reader may open at once: it is
 * created empty before DuckDB opens it, and DuckDB writes into it in place (the format's
 * `USE_TMP_FILE false`). `run` runs the COPY on a connection of its own.
 */
export function startRowsFile(
  run: (sql: string, params: readonly SqlValue[]) => Promise<void>,
  query: PageQuery,
  format: FileFormat,
  tmpDir: string,
): RowsBeingWritten {
  const file = fileName(tmpDir, format);
  const created = fs.writeFile(file, '', { flag: 'wx' });
  const written = (async () => {
    try {
      await created;
      await run(copyTo(query, file, format), query.params);
      return await writtenFile(file, format);
    } catch (error) {
      await unlinkIfThere(file);
      throw error;
    }
  })();
  // Whoever reads the rows sees a failure; these two are only waited for.
  created.catch(() => undefined);
  written.catch(() => undefined);
  return { path: file, created, written, trailing: format.trailingBytes };
}

/**
 * Waits before a reader looks again at a file that has not grown. A plain timer, not a race
 * against `written`: each race would leave a reaction on `written` until it settles,
 * thousands over a long part; the end is noticed at most GROWTH_POLL_MS later.
 */
export function untilGrown(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, GROWTH_POLL_MS));
}

/** What is known of a file being written: its final form, or its statement's failure. */
export function watchWritten(rows: RowsBeingWritten): { written?: FileBody; failed?: { error: unknown } } {
  const state: { written?: FileBody; failed?: { error: unknown } } = {};
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

/** Writes pages' rows into files on the results readers, shared fairly between keys. */
export class RowsWriter {
  constructor(
    private readonly database: Database,
    /** Where DuckDB writes (DATA_DIR/tmp, a folder it may write). */
    private readonly tmpDir: string,
  ) {}

  read<T>(reader: string, work: (session: Session) => Promise<T>): Promise<T> {
    return readResults(this.database, reader, work);
  }

  /**
   * Each query on a reader connection of its own, at the same time; then their files as one
   * body, in order. `onWorkers`: run on DuckDB's worker threads only (Session.runOnWorkers).
   */
  async write(
    reader: string,
    queries: readonly { query: PageQuery; onWorkers?: boolean }[],
    format: FileFormat,
  ): Promise<FileBody> {
    const written = await Promise.allSettled(
      queries.map(({ query, onWorkers }) =>
        this.read(reader, (session) => writeRowsFile(session, query, format, this.tmpDir, onWorkers)),
      ),
    );
    const files = written.flatMap((w) => (w.status === 'fulfilled' ? [w.value] : []));
    const failed = written.find((w) => w.status === 'rejected');
    if (failed) {
      await Promise.all(files.map((file) => file.discard()));
      throw failed.reason;
    }
    return FileBody.written(
      files.flatMap((file) => file.files),
      format.trailingBytes,
    );
  }

  /** Starts writing the query's rows into a file that can be read while it grows. */
  start(reader: string, query: PageQuery, format: FileFormat): RowsBeingWritten {
    const run = (copy: string, params: readonly SqlValue[]) =>
      this.read(reader, (session) => session.run(copy, params));
    return startRowsFile(run, query, format, this.tmpDir);
  }
}
