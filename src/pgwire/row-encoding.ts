import { type DuckDBDataChunk, type DuckDBType, DuckDBTypeId } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import { decimalText } from '../storage/decimal-text.js';
import type { BackendWriter } from './backend-messages.js';
import { MESSAGE } from './backend-messages.js';
import { dateText, float4Text, float8Text, timestampText } from './text-values.js';
import { valueBinary, valueText } from './value-encoding.js';

/**
 * DataRow messages straight from DuckDB's vectors. The common types are read from the
 * vectors' memory (node-bindings' views, no copy) and written into the writer's buffer;
 * the rest go through node-api's values (value-encoding.ts).
 *
 * A chunk's rows are written column by column into one buffer: a first pass adds up each
 * row's length, a second writes each column's fields into their places, so each loop runs over
 * one column of one type (writing a row at a time called every column's function through one
 * call site). Most of the time is copying bytes, done four at a time through DataViews
 * (copyBytes). Measured on the benchmark's 1,000,000 rows of six columns, encoding alone in one
 * process (scratch script, 2026-11-27, 6 rounds each): row by row, byte by byte, 330–500 ms;
 * column by column 346–438; with the copies four bytes at a time 245–346.
 *
 * Strings: node-api reads each string longer than 12 bytes with one native call that copies
 * it (0.85 µs a call here, so 1.7 s for the two long columns of 1,000,000 rows). DuckDB writes
 * the strings of a chunk one after the other into its string heap: measured on 1,000,000 rows
 * of six columns, 2–6 runs of contiguous strings per chunk of 2,048. So each run is copied with
 * one call (`get_data_from_pointer` from the first string's pointer, the run's length), after
 * checking from the vector's string_t entries that each string starts where the last one ends.
 * (Scratch script, 2026-11-24: the rows' encoding went from ~1.5 s to under 0.3 s.)
 */

export interface EncodedColumn {
  type: DuckDBType;
  /** 0 text, 1 binary. */
  format: number;
  /**
   * Where the chunk holds this column: its value (`raw`), and its PostgreSQL text already
   * written by DuckDB (`text`, see renderedInSql), which is used where not NULL. Without them,
   * the column at the column's own index.
   */
  source?: { raw?: number; text?: number };
}

/**
 * For the types whose text costs most in JavaScript, the SQL that makes DuckDB write it, on
 * its threads, where it is PostgreSQL's exactly; NULL where it would not be (the JavaScript
 * text is then written from the value). Measured on 1,000,000 rows of a bigint, a double, a
 * varchar, a timestamp, a boolean and a 0x address (scratch script, load ~10): the doubles'
 * text (V8's shortest printing) and the timestamps' took ~60% of the JavaScript encoding's
 * time; DuckDB writes them in 30–70 ns a value (docs/library-notes.md).
 */
export function renderedInSql(type: DuckDBType, column: string): string | undefined {
  switch (type.typeId) {
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return `CAST(${column} AS VARCHAR)`;
    case DuckDBTypeId.DOUBLE:
      // to_json prints the shortest digits in fixed notation, as PostgreSQL does in this range;
      // integral values (`100.0`), zeros and the rest are left to JavaScript.
      return `CASE WHEN ${column} <> trunc(${column}) AND abs(${column}) >= 1e-4 AND abs(${column}) < 1e15 THEN CAST(to_json(${column}) AS VARCHAR) END`;
    case DuckDBTypeId.DATE:
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_TZ:
      // DuckDB writes BC years as `(BC)` after the date; infinities have no year (NULL).
      return `CASE WHEN year(${column}) >= 1 THEN CAST(${column} AS VARCHAR) END`;
    default:
      return undefined;
  }
}

const NULL_FIELD = -1;

/** One column of a chunk: the bytes of each row's field, measured, then written. */
interface FieldColumn {
  /** Adds each row's field length (4, and its bytes unless NULL) to `sizes[row]`. */
  measure(sizes: Int32Array, from: number, to: number): void;
  /** Writes each row's field at `at[row]` of `buffer` (`view` over it), and moves that past it. */
  write(buffer: Buffer, view: DataView, at: Int32Array, from: number, to: number): void;
}

/** A row's text as JavaScript writes it: ASCII text, UTF-8 or binary bytes, or null for NULL. */
type ValueAt = (row: number) => string | Uint8Array | null;

function writeLength(buffer: Buffer, at: number, length: number): void {
  buffer[at] = length >>> 24;
  buffer[at + 1] = (length >>> 16) & 0xff;
  buffer[at + 2] = (length >>> 8) & 0xff;
  buffer[at + 3] = length & 0xff;
}

/**
 * Copies `length` bytes: four at a time through DataViews below 96 bytes, where Buffer.copy's
 * call costs more than the copy (scratch script, 2026-11-27: 19 bytes 16 ns against 24 byte by
 * byte and 64 by Buffer.copy; 42 bytes 23, 47 and 62 ns).
 */
function copyBytes(from: DataView, start: number, to: DataView, at: number, length: number): void {
  let i = 0;
  for (; i + 4 <= length; i += 4) to.setUint32(at + i, from.getUint32(start + i));
  for (; i < length; i++) to.setUint8(at + i, from.getUint8(start + i));
}

const viewOf = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** The validity mask of a vector, or undefined when every row is valid. */
function validityOf(vector: duckdb.Vector, rows: number): Uint8Array | undefined {
  const mask = duckdb.vector_get_validity(vector, Math.ceil(rows / 64) * 8);
  return mask && mask.length > 0 ? mask : undefined;
}

const isValid = (mask: Uint8Array | undefined, row: number) =>
  mask === undefined || ((mask[row >> 3] as number) & (1 << (row & 7))) !== 0;

/** Fixed-width values of a vector as a typed array over DuckDB's memory. */
function fixedData(vector: duckdb.Vector, rows: number, width: number): ArrayBuffer & { offset: number } {
  const data = duckdb.vector_get_data(vector, rows * width);
  return Object.assign(data.buffer as ArrayBuffer, { offset: data.byteOffset });
}

/**
 * A VARCHAR vector (or BLOB, whose bytes are sent as they are): each row's bytes from a
 * string_t of 16 bytes (length, then the bytes inline up to 12, else a 4-byte prefix and a
 * pointer), the long ones copied out of DuckDB by runs.
 */
class StringVector {
  private readonly words: Uint32Array;
  private readonly inline: Buffer;
  readonly mask: Uint8Array | undefined;
  private readonly runs: Buffer[] = [];
  private readonly runViews: DataView[] = [];
  private readonly inlineView: DataView;
  private readonly runOf: Int32Array;
  private readonly offsetIn: Int32Array;

  constructor(vector: duckdb.Vector, rows: number) {
    const entries = duckdb.vector_get_data(vector, rows * 16);
    this.words = new Uint32Array(entries.buffer, entries.byteOffset, rows * 4);
    this.inline = Buffer.from(entries.buffer, entries.byteOffset, rows * 16);
    this.inlineView = viewOf(this.inline);
    this.mask = validityOf(vector, rows);
    this.runOf = new Int32Array(rows);
    this.offsetIn = new Int32Array(rows);
    const words = this.words;
    let runFirst = -1;
    let runBytes = 0;
    let runEnd = -1;
    const closeRun = () => {
      if (runFirst < 0) return;
      const copied = duckdb.get_data_from_pointer(
        entries.buffer as ArrayBuffer,
        entries.byteOffset + runFirst * 16 + 8,
        runBytes,
      );
      this.runs.push(Buffer.from(copied.buffer, copied.byteOffset, copied.byteLength));
      this.runViews.push(viewOf(copied));
    };
    for (let row = 0; row < rows; row++) {
      const length = words[row * 4] as number;
      if (length <= 12 || !isValid(this.mask, row)) continue;
      const pointer = (words[row * 4 + 2] as number) + (words[row * 4 + 3] as number) * 4294967296;
      if (pointer !== runEnd) {
        closeRun();
        runFirst = row;
        runBytes = 0;
      }
      this.runOf[row] = this.runs.length;
      this.offsetIn[row] = runBytes;
      runBytes += length;
      runEnd = pointer + length;
    }
    closeRun();
  }

  /** The row's length in bytes, or -1 for NULL. */
  lengthOf(row: number): number {
    return isValid(this.mask, row) ? (this.words[row * 4] as number) : NULL_FIELD;
  }

  /** Writes the row's field (length, bytes) at `at` of `buffer` (`view` over it); returns where it ends. */
  writeField(buffer: Buffer, view: DataView, at: number, row: number): number {
    if (!isValid(this.mask, row)) {
      view.setInt32(at, NULL_FIELD);
      return at + 4;
    }
    const length = this.words[row * 4] as number;
    view.setInt32(at, length);
    at += 4;
    if (length <= 12) copyBytes(this.inlineView, row * 16 + 4, view, at, length);
    else if (length < 96)
      copyBytes(
        this.runViews[this.runOf[row] as number] as DataView,
        this.offsetIn[row] as number,
        view,
        at,
        length,
      );
    else {
      const start = this.offsetIn[row] as number;
      (this.runs[this.runOf[row] as number] as Buffer).copy(buffer, at, start, start + length);
    }
    return at + length;
  }
}

/** A column DuckDB gave as strings: its text (rendered in SQL), or a VARCHAR (or a binary BLOB). */
function stringField(strings: StringVector): FieldColumn {
  return {
    measure(sizes, from, to) {
      for (let row = from; row < to; row++) {
        const length = strings.lengthOf(row);
        sizes[row] += 4 + Math.max(length, 0);
      }
    },
    write(buffer, view, at, from, to) {
      for (let row = from; row < to; row++)
        at[row] = strings.writeField(buffer, view, at[row] as number, row);
    },
  };
}

/**
 * A column whose text JavaScript writes from the value, for every row, or (`strings` given)
 * only for the rows where DuckDB's text is NULL.
 */
function valueField(valueAt: ValueAt, rows: number, strings?: StringVector): FieldColumn {
  const values: (string | Uint8Array | null)[] = new Array(rows);
  return {
    measure(sizes, from, to) {
      for (let row = from; row < to; row++) {
        const length = strings ? strings.lengthOf(row) : NULL_FIELD;
        if (length >= 0) {
          sizes[row] += 4 + length;
          continue;
        }
        const value = valueAt(row);
        values[row] = value;
        sizes[row] += 4 + (value === null ? 0 : value.length);
      }
    },
    write(buffer, view, at, from, to) {
      for (let row = from; row < to; row++) {
        let position = at[row] as number;
        if (strings && strings.lengthOf(row) >= 0) {
          at[row] = strings.writeField(buffer, view, position, row);
          continue;
        }
        const value = values[row] as string | Uint8Array | null;
        if (value === null) {
          writeLength(buffer, position, NULL_FIELD);
          at[row] = position + 4;
          continue;
        }
        writeLength(buffer, position, value.length);
        position += 4;
        if (typeof value === 'string')
          for (let i = 0; i < value.length; i++) buffer[position + i] = value.charCodeAt(i);
        else buffer.set(value, position);
        at[row] = position + value.length;
      }
    },
  };
}

function numberValues(vector: duckdb.Vector, rows: number, typeId: DuckDBTypeId): ValueAt | undefined {
  const view = (width: number) => fixedData(vector, rows, width);
  let values: ArrayLike<number>;
  let text: (value: number) => string = String;
  switch (typeId) {
    case DuckDBTypeId.TINYINT: {
      const data = view(1);
      values = new Int8Array(data, data.offset, rows);
      break;
    }
    case DuckDBTypeId.UTINYINT: {
      const data = view(1);
      values = new Uint8Array(data, data.offset, rows);
      break;
    }
    case DuckDBTypeId.SMALLINT: {
      const data = view(2);
      values = new Int16Array(data, data.offset, rows);
      break;
    }
    case DuckDBTypeId.USMALLINT: {
      const data = view(2);
      values = new Uint16Array(data, data.offset, rows);
      break;
    }
    case DuckDBTypeId.INTEGER: {
      const data = view(4);
      values = new Int32Array(data, data.offset, rows);
      break;
    }
    case DuckDBTypeId.UINTEGER: {
      const data = view(4);
      values = new Uint32Array(data, data.offset, rows);
      break;
    }
    case DuckDBTypeId.FLOAT: {
      const data = view(4);
      values = new Float32Array(data, data.offset, rows);
      text = float4Text;
      break;
    }
    case DuckDBTypeId.DOUBLE: {
      const data = view(8);
      values = new Float64Array(data, data.offset, rows);
      text = float8Text;
      break;
    }
    case DuckDBTypeId.DATE: {
      const data = view(4);
      values = new Int32Array(data, data.offset, rows);
      text = dateText;
      break;
    }
    default:
      return undefined;
  }
  const mask = validityOf(vector, rows);
  return (row) => (isValid(mask, row) ? text(values[row] as number) : null);
}

/** BIGINT, UBIGINT, TIMESTAMP(TZ) and DECIMAL up to 18 digits: 64-bit values, exact. */
function int64Values(vector: duckdb.Vector, rows: number, type: DuckDBType): ValueAt | undefined {
  const typeId = type.typeId;
  let text: (value: bigint) => string;
  if (typeId === DuckDBTypeId.BIGINT || typeId === DuckDBTypeId.UBIGINT) text = String;
  else if (typeId === DuckDBTypeId.TIMESTAMP) text = (value) => timestampText(value, false);
  else if (typeId === DuckDBTypeId.TIMESTAMP_TZ) text = (value) => timestampText(value, true);
  else if (typeId === DuckDBTypeId.DECIMAL && type.width > 9 && type.width <= 18) {
    const scale = type.scale;
    text = (value) => decimalText(value, scale);
  } else return undefined;
  const data = fixedData(vector, rows, 8);
  const values =
    typeId === DuckDBTypeId.UBIGINT
      ? new BigUint64Array(data, data.offset, rows)
      : new BigInt64Array(data, data.offset, rows);
  const mask = validityOf(vector, rows);
  return (row) => (isValid(mask, row) ? text(values[row] as bigint) : null);
}

/** DECIMAL of up to 9 digits (int16 or int32 inside). */
function smallDecimalValues(vector: duckdb.Vector, rows: number, type: DuckDBType): ValueAt | undefined {
  if (type.typeId !== DuckDBTypeId.DECIMAL || type.width > 9) return undefined;
  const width = type.width <= 4 ? 2 : 4;
  const data = fixedData(vector, rows, width);
  const values =
    width === 2 ? new Int16Array(data, data.offset, rows) : new Int32Array(data, data.offset, rows);
  const scale = type.scale;
  const mask = validityOf(vector, rows);
  return (row) => (isValid(mask, row) ? decimalText(BigInt(values[row] as number), scale) : null);
}

function booleanValues(vector: duckdb.Vector, rows: number): ValueAt {
  const data = fixedData(vector, rows, 1);
  const values = new Uint8Array(data, data.offset, rows);
  const mask = validityOf(vector, rows);
  return (row) => (isValid(mask, row) ? (values[row] ? 't' : 'f') : null);
}

/** Any type, any format: node-api's value, then value-encoding.ts. */
function generalValues(chunk: DuckDBDataChunk, column: number, encoded: EncodedColumn): ValueAt {
  const vector = chunk.getColumnVector(column);
  return (row) => {
    const value = vector.getItem(row);
    if (value === null) return null;
    if (encoded.format === 1) return valueBinary(value, encoded.type);
    return Buffer.from(valueText(value, encoded.type), 'utf8');
  };
}

/** The value's text or bytes as JavaScript writes them, or undefined for a string vector. */
function valuesOf(chunk: DuckDBDataChunk, column: number, encoded: EncodedColumn): ValueAt | undefined {
  const vector = duckdb.data_chunk_get_vector(chunk.chunk, column);
  const rows = chunk.rowCount;
  const { type, format } = encoded;
  if (type.typeId === DuckDBTypeId.VARCHAR || (format === 1 && type.typeId === DuckDBTypeId.BLOB))
    return undefined;
  if (format === 0) {
    if (type.typeId === DuckDBTypeId.BOOLEAN) return booleanValues(vector, rows);
    const fast =
      numberValues(vector, rows, type.typeId) ??
      int64Values(vector, rows, type) ??
      smallDecimalValues(vector, rows, type);
    if (fast) return fast;
  }
  return generalValues(chunk, column, encoded);
}

function fieldColumn(chunk: DuckDBDataChunk, column: number, encoded: EncodedColumn): FieldColumn {
  const rows = chunk.rowCount;
  const source = encoded.source;
  const strings = (index: number) => new StringVector(duckdb.data_chunk_get_vector(chunk.chunk, index), rows);
  if (source?.text !== undefined) {
    const text = strings(source.text);
    if (source.raw === undefined) return stringField(text);
    const values = valuesOf(chunk, source.raw, encoded);
    return values ? valueField(values, rows, text) : stringField(text);
  }
  const index = source?.raw ?? column;
  const values = valuesOf(chunk, index, encoded);
  return values ? valueField(values, rows) : stringField(strings(index));
}

/**
 * Bytes of rows written into one buffer at most, unless one row is larger: a chunk of long
 * strings is not gathered whole before the socket has any of it.
 */
const SLICE_BYTES = 1024 * 1024;

/** Writes rows [from, to) of a chunk as DataRow messages. */
export function writeDataRows(
  w: BackendWriter,
  chunk: DuckDBDataChunk,
  columns: readonly EncodedColumn[],
  from: number,
  to: number,
): void {
  if (to <= from) return;
  const fields = columns.map((column, i) => fieldColumn(chunk, i, column));
  // Each row's message length: itself (4), the field count (2), then its fields.
  const sizes = new Int32Array(to).fill(6);
  for (const field of fields) field.measure(sizes, from, to);
  const at = new Int32Array(to);
  let first = from;
  while (first < to) {
    let last = first;
    let total = 0;
    do total += 1 + (sizes[last++] as number);
    while (last < to && total + 1 + (sizes[last] as number) <= SLICE_BYTES);
    w.ensure(total);
    const buffer = w.buffer;
    let position = w.position;
    for (let row = first; row < last; row++) {
      const size = sizes[row] as number;
      buffer[position] = MESSAGE.dataRow;
      writeLength(buffer, position + 1, size);
      buffer[position + 5] = fields.length >>> 8;
      buffer[position + 6] = fields.length & 0xff;
      at[row] = position + 7;
      position += 1 + size;
    }
    const view = viewOf(buffer);
    for (const field of fields) field.write(buffer, view, at, first, last);
    w.position = position;
    first = last;
  }
}
