import fs from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { ulid } from 'ulid';
import { bodyToFile } from './body-to-file.js';
import type { LineEnd } from './csv-dialect.js';
import { CsvRecordScanner } from './csv-record-scanner.js';

/**
 * Streams a raw request body (an insert's CSV, NDJSON or Parquet) to a temporary file, so DuckDB's
 * reader can take it from disk and the body is never held whole in memory.
 */

export interface ReceivedBody {
  /** The caller removes it with `discard`. */
  file: string;
  /** Bytes of the body as sent. */
  bytes: number;
  /** The body's line end (CSV; LF for NDJSON and bodies of one line). */
  lineEnd: LineEnd;
}

/**
 * Drops carriage returns. In NDJSON a raw CR can only be whitespace between tokens (inside
 * a string it must be escaped), so this changes no value, and it spares DuckDB's line
 * reader a file that mixes CRLF and LF line ends, which it refuses.
 */
class DropCarriageReturns extends Transform {
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let at = chunk.indexOf(0x0d);
    if (at < 0) {
      callback(null, chunk);
      return;
    }
    const kept = Buffer.allocUnsafe(chunk.length);
    let length = 0;
    let from = 0;
    while (at >= 0) {
      length += chunk.copy(kept, length, from, at);
      from = at + 1;
      at = chunk.indexOf(0x0d, from);
    }
    length += chunk.copy(kept, length, from);
    callback(null, kept.subarray(0, length));
  }
}

/** Checks the body's records on the way to disk (csv-record-scanner.ts): a problem fails it. */
class ScanRecords extends Transform {
  readonly scanner: CsvRecordScanner;

  constructor(format: 'csv' | 'ndjson') {
    super();
    this.scanner = new CsvRecordScanner({ format });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      this.scanner.scan(chunk);
      callback(null, chunk);
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      this.scanner.end();
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }
}

export async function receiveBody(
  body: Readable,
  tmpDir: string,
  maxBytes: number,
  format: 'csv' | 'ndjson' | 'parquet',
): Promise<ReceivedBody> {
  await fs.mkdir(tmpDir, { recursive: true });
  const file = path.join(tmpDir, `insert-${ulid()}`);
  // A Parquet file is binary: DuckDB's reader checks it (parquet-body.ts).
  if (format === 'parquet') return { file, bytes: await bodyToFile(body, file, maxBytes), lineEnd: 'lf' };
  const scan = new ScanRecords(format);
  const transforms = format === 'ndjson' ? [new DropCarriageReturns(), scan] : [scan];
  const bytes = await bodyToFile(body, file, maxBytes, transforms);
  return { file, bytes, lineEnd: scan.scanner.lineEnd ?? 'lf' };
}
