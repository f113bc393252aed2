import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { CsvRecordScanner } from './csv-record-scanner.js';

/**
 * Line numbers of a body on disk, for error messages: physical lines, 1-based, the header
 * being line 1. Only ever computed after something failed, by reading the file again.
 */

/** The line holding byte `position` of a file: line feeds before it, plus one. */
export async function lineAtByte(file: string, position: number): Promise<number> {
  const handle = await fsp.open(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    let line = 1;
    let offset = 0;
    while (offset < position) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, position - offset), offset);
      if (bytesRead === 0) break;
      for (let at = buffer.indexOf(0x0a, 0); at >= 0 && at < bytesRead; at = buffer.indexOf(0x0a, at + 1))
        line++;
      offset += bytesRead;
    }
    return line;
  } finally {
    await handle.close();
  }
}

/**
 * The line on which data record `ordinal` (1-based: the first record after the header) of a
 * CSV starts, counting records as DuckDB's reader does (csv-record-scanner.ts follows its
 * quoting): a blank line is no record, except in a one-column CSV, where it is a NULL row.
 */
export async function lineOfCsvRecord(file: string, ordinal: number, fieldCount: number): Promise<number> {
  const found = await recordsOfCsvPart(file, ordinal, fieldCount);
  return found.line ?? found.lastLine;
}

/**
 * The line of data record `ordinal` of a CSV file, or, when it holds fewer records, how many
 * it holds (the caller looks in the next part of a body).
 */
export async function recordsOfCsvPart(
  file: string,
  ordinal: number,
  fieldCount: number,
): Promise<{ line: number | undefined; records: number; lastLine: number }> {
  const found = await csvRecordLines(file, [ordinal], fieldCount);
  return { line: found.get(ordinal), records: found.records, lastLine: found.lastLine };
}

/**
 * The lines of data records `ordinals` (1-based, sorted or not) of a CSV file, in one scan; and
 * how many records it holds, and the line its last record starts on.
 */
export async function csvRecordLines(
  file: string,
  ordinals: readonly number[],
  fieldCount: number,
): Promise<Map<number, number> & { records: number; lastLine: number }> {
  const wanted = new Set(ordinals);
  const found = new Map<number, number>();
  const last = Math.max(0, ...ordinals);
  let seen = -1; // The header is record 0.
  const scanner = new CsvRecordScanner({
    format: 'csv',
    onRecord: (line, bytes) => {
      if (bytes === 0 && fieldCount > 1 && seen >= 0) return;
      seen++;
      if (wanted.has(seen) && !found.has(seen)) found.set(seen, line);
    },
  });
  const done = () => Object.assign(found, { records: seen, lastLine: scanner.openRecordLine });
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) {
    scanner.scan(chunk as Buffer);
    if (found.size === wanted.size && seen >= last) return done();
  }
  // The last record, when the body does not end with a line end.
  if (scanner.openRecordBytes > 0) {
    seen++;
    if (wanted.has(seen) && !found.has(seen)) found.set(seen, scanner.openRecordLine);
  }
  return done();
}

/**
 * Drops the line feeds and carriage returns at the very end of a file, so that trailing
 * blank lines do not become rows of NULLs in a one-column CSV. Returns the new size.
 */
export async function trimTrailingNewlines(file: string): Promise<number> {
  const handle = await fsp.open(file, 'r+');
  try {
    let size = (await handle.stat()).size;
    const buffer = Buffer.allocUnsafe(1 << 16);
    while (size > 0) {
      const start = Math.max(0, size - buffer.length);
      const { bytesRead } = await handle.read(buffer, 0, size - start, start);
      let end = bytesRead;
      while (end > 0 && (buffer[end - 1] === 0x0a || buffer[end - 1] === 0x0d)) end--;
      size = start + end;
      if (end > 0) break;
    }
    await handle.truncate(size);
    return size;
  } finally {
    await handle.close();
  }
}
