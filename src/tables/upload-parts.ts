import { EventEmitter } from 'node:events';
import type { FileHandle } from 'node:fs/promises';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { badRequest } from '../errors.js';
import { type CsvPart, type LineEnd, MAX_RECORD_BYTES } from './csv-dialect.js';
import { parseCsvHeader, validateColumnNames } from './csv-header.js';
import { CsvRecordScanner } from './csv-record-scanner.js';

/**
 * Writes an upload's decoded CSV to disk in parts cut at record boundaries, so that the
 * loader can type and load each part while the rest still arrives. Every part after the
 * first starts with a copy of the header line, so DuckDB reads each part, and the list of
 * parts, as it reads the whole. The first part is small: the sample the types are inferred
 * from. The record scanner checks the body on the way (too long records, stray carriage
 * returns, mixed line ends, quoting), so a problem fails the upload while it arrives.
 */

/** The sample: the first part ends at the first record boundary past either bound. */
const SAMPLE_BYTES = 2 * 1024 * 1024;
const SAMPLE_RECORDS = 20_480;
/**
 * Later parts: large enough that each load statement's fixed cost (planning grows with the
 * columns: ~0.1 ms a column, measured) stays small against its data, small enough that
 * loading follows the arrival closely.
 */
const PART_BYTES = 16 * 1024 * 1024;
const PART_BYTES_PER_COLUMN = 16 * 1024;

export interface UploadPart extends CsvPart {
  /** Bytes of CSV in the part, the header copy not counted. */
  bytes: number;
}

export interface UploadPartsEvents {
  part: [UploadPart];
}

export class UploadParts extends Writable {
  readonly events = new EventEmitter<UploadPartsEvents>();
  readonly parts: UploadPart[] = [];
  /** The header's column names, once its line has arrived (undefined for an empty CSV). */
  columns: string[] | undefined;
  /** CSV bytes received, trailing blank lines not counted once ended. */
  bytes = 0;
  private readonly scanner = new CsvRecordScanner({ format: 'csv' });
  /** The header line as each part after the first repeats it (no byte-order mark). */
  private headerLine: Buffer | undefined;
  private headBytes: Buffer[] = [];
  private file: FileHandle | undefined;
  private partFile = '';
  private partFirstLine = 2;
  private partBytes = 0;
  private partRecordsBefore = 0;
  private stopped: Error | undefined;

  constructor(private readonly dir: string) {
    super({ highWaterMark: 4 * 1024 * 1024 });
  }

  get lineEnd(): LineEnd {
    return this.scanner.lineEnd ?? 'lf';
  }

  /** Makes the next write fail with `error`: the loader found a problem, the upload is over. */
  stop(error: Error): void {
    this.stopped ??= error;
  }

  override async _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error) => void) {
    try {
      if (this.stopped) throw this.stopped;
      await this.take(chunk);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override async _final(callback: (error?: Error) => void) {
    try {
      if (this.stopped) throw this.stopped;
      this.scanner.end();
      if (this.columns === undefined) this.readHeader(Buffer.concat(this.headBytes), true);
      await this.finishPart(this.scanner.trailingNewlineBytes);
      this.bytes -= this.scanner.trailingNewlineBytes;
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override async _destroy(error: Error | null, callback: (error?: Error | null) => void) {
    await this.file?.close().catch(() => undefined);
    this.file = undefined;
    callback(error);
  }

  private async take(chunk: Buffer): Promise<void> {
    const offset = this.bytes;
    this.scanner.scan(chunk);
    this.bytes += chunk.length;
    if (this.columns === undefined) {
      // Until the header has come, its bytes are kept: only blank lines can keep it from
      // coming, and no more of them than one record may take.
      if (this.bytes > MAX_RECORD_BYTES + chunk.length)
        throw badRequest(
          `CSV line 1 (the header): the first ${MAX_RECORD_BYTES} bytes hold only blank lines`,
        );
      this.headBytes.push(chunk);
      if (this.scanner.records > 0) this.readHeader(Buffer.concat(this.headBytes), false);
    }
    const cut = this.scanner.lastCut;
    const target = this.parts.length === 0 ? SAMPLE_BYTES : this.partTarget();
    // A part holds at least one record; the first one a record besides the header.
    const records = this.scanner.lastCutRecords - this.partRecordsBefore - (this.parts.length === 0 ? 1 : 0);
    const due =
      this.partBytes + chunk.length >= target || (this.parts.length === 0 && records > SAMPLE_RECORDS);
    if (this.columns !== undefined && due && records > 0 && cut > offset) {
      const at = cut - offset;
      await this.append(chunk.subarray(0, at));
      await this.finishPart(0);
      await this.startPart(this.scanner.lastCutLine, this.scanner.lastCutRecords);
      await this.append(chunk.subarray(at));
    } else {
      await this.append(chunk);
    }
  }

  private partTarget(): number {
    return Math.max(PART_BYTES, (this.columns?.length ?? 0) * PART_BYTES_PER_COLUMN);
  }

  private readHeader(head: Buffer, complete: boolean): void {
    const header = parseCsvHeader(head, complete);
    if (!header) {
      this.columns = undefined;
      return;
    }
    validateColumnNames(header.columns);
    this.columns = header.columns;
    const bom = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
    const end = this.scanner.headerEnd >= 0 ? this.scanner.headerEnd : head.length;
    this.headerLine = Buffer.from(head.subarray(bom, end));
    this.headBytes = [];
  }

  private async append(bytes: Buffer): Promise<void> {
    if (bytes.length === 0) return;
    if (!this.file) await this.startPart(2, 0);
    await (this.file as FileHandle).write(bytes);
    this.partBytes += bytes.length;
  }

  private async startPart(firstLine: number, recordsBefore: number): Promise<void> {
    this.partFile = path.join(this.dir, `part-${String(this.parts.length).padStart(4, '0')}.csv`);
    this.file = await fs.open(this.partFile, 'w');
    this.partFirstLine = firstLine;
    this.partBytes = 0;
    this.partRecordsBefore = recordsBefore;
    // The first part holds the header itself; the others a copy, with the body's line end.
    if (this.parts.length > 0) {
      const end = Buffer.from(this.lineEnd === 'crlf' ? '\r\n' : '\n');
      await this.file.write(Buffer.concat([this.headerLine as Buffer, end]));
    }
  }

  /** Closes the current part, `trim` bytes of trailing blank lines shorter, and hands it on. */
  private async finishPart(trim: number): Promise<void> {
    if (!this.file) {
      if (this.parts.length > 0 || this.bytes === 0) return;
      await this.startPart(2, 0);
    }
    const file = this.file as FileHandle;
    if (trim > 0) {
      const { size } = await file.stat();
      await file.truncate(Math.max(0, size - trim));
    }
    await file.close();
    this.file = undefined;
    const part: UploadPart = {
      file: this.partFile,
      firstLine: this.partFirstLine,
      bytes: this.partBytes - trim,
    };
    this.parts.push(part);
    this.events.emit('part', part);
  }
}

/** A fresh folder for one upload's parts. */
export async function partsFolder(tmpDir: string, id: string): Promise<string> {
  const dir = path.join(tmpDir, `upload-${id}`);
  await fs.mkdir(dir, { recursive: true });
  return dir;
}
