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

/**
 * `select` must have one VARCHAR column, the rendered row. DuckDB keeps the order of the
 * SELECT's rows in the file (its ORDER BY, or the table's own order without one, since
 * `preserve_insertion_order` is on).
 */
export async function writeRowsFile(
  session: Session,
  select: string,
  params: readonly SqlValue[],
  format: ResultFormat,
  tmpDir: string,
): Promise<RowsFile> {
  const file = path.join(tmpDir, `rows-${ulid()}.${format === 'json' ? 'jsonl' : 'csv'}`);
  const separator = format === 'json' ? `','` : `E'\\n'`;
  try {
    await session.run(
      `COPY (${select}) TO ${quoteLiteral(file)} (FORMAT csv, HEADER false, QUOTE '', ESCAPE '', NEW_LINE ${separator})`,
      params,
    );
    const { size } = await fs.stat(file);
    return { files: [{ path: file, size }], bytes: format === 'json' ? Math.max(0, size - 1) : size };
  } catch (error) {
    await unlinkIfThere(file);
    throw error;
  }
}

/** Consecutive parts of one page, written separately, as one. */
export function joinRowsFiles(parts: readonly RowsFile[], format: ResultFormat): RowsFile {
  const files = parts.flatMap((part) => part.files);
  const size = files.reduce((sum, file) => sum + file.size, 0);
  return { files, bytes: format === 'json' ? Math.max(0, size - 1) : size };
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
