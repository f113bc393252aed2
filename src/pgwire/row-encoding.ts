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
 * Strings: node-api reads each string longer than 12 bytes with one native call that copies
 * it (0.85 µs a call here, so 1.7 s for the two long columns of 1,000,000 rows). DuckDB writes
 * the strings of a chunk one after the other into its string heap: measured on 1,000,000 rows
 * of six columns, 2–6 runs of contiguous strings per chunk of 2,048. So each run is copied with
 * one call (`get_data_from_pointer` from the first string's pointer, the run's length), after
 * checking from the vector's string_t entries that each string starts where the last one ends.
 * (Scratch script, 2026-11-24: the rows' encoding went from ~1.5 s to under 0.3 s.)
 */

type ColumnWriter = (w: BackendWriter, row: number) => void;

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

/** Writes a field's length then its ASCII text (numbers, dates: never multi-byte). */
function writeAscii(w: BackendWriter, text: string): void {
  w.ensure(4 + text.length);
  const buffer = w.buffer;
  let position = w.position;
  buffer.writeInt32BE(text.length, position);
  position += 4;
  for (let i = 0; i < text.length; i++) buffer[position + i] = text.charCodeAt(i);
  w.position = position + text.length;
}

function writeNull(w: BackendWriter): void {
  w.ensure(4);
  w.buffer.writeInt32BE(NULL_FIELD, w.position);
  w.position += 4;
}

/** The validity mask's test for a row, or undefined when every row is valid. */
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

function numberColumn(vector: duckdb.Vector, rows: number, typeId: DuckDBTypeId): ColumnWriter | undefined {
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
  return (w, row) => {
    if (isValid(mask, row)) writeAscii(w, text(values[row] as number));
    else writeNull(w);
  };
}

/** BIGINT, UBIGINT, TIMESTAMP(TZ) and DECIMAL up to 18 digits: 64-bit values, exact. */
function int64Column(vector: duckdb.Vector, rows: number, type: DuckDBType): ColumnWriter | undefined {
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
  return (w, row) => {
    if (isValid(mask, row)) writeAscii(w, text(values[row] as bigint));
    else writeNull(w);
  };
}

/** DECIMAL of up to 9 digits (int16 or int32 inside). */
function smallDecimalColumn(vector: duckdb.Vector, rows: number, type: DuckDBType): ColumnWriter | undefined {
  if (type.typeId !== DuckDBTypeId.DECIMAL || type.width > 9) return undefined;
  const width = type.width <= 4 ? 2 : 4;
  const data = fixedData(vector, rows, width);
  const values =
    width === 2 ? new Int16Array(data, data.offset, rows) : new Int32Array(data, data.offset, rows);
  const scale = type.scale;
  const mask = validityOf(vector, rows);
  return (w, row) => {
    if (isValid(mask, row)) writeAscii(w, decimalText(BigInt(values[row] as number), scale));
    else writeNull(w);
  };
}

function booleanColumn(vector: duckdb.Vector, rows: number): ColumnWriter {
  const data = fixedData(vector, rows, 1);
  const values = new Uint8Array(data, data.offset, rows);
  const mask = validityOf(vector, rows);
  return (w, row) => {
    if (!isValid(mask, row)) return writeNull(w);
    w.ensure(5);
    w.buffer.writeInt32BE(1, w.position);
    w.buffer[w.position + 4] = values[row] ? 0x74 : 0x66; // t, f
    w.position += 5;
  };
}

/**
 * VARCHAR (and BLOB in binary): each row's bytes from a string_t of 16 bytes (length, then
 * the bytes inline up to 12, else a 4-byte prefix and a pointer), long ones copied by runs.
 */
function stringColumn(vector: duckdb.Vector, rows: number): ColumnWriter {
  const entries = duckdb.vector_get_data(vector, rows * 16);
  const words = new Uint32Array(entries.buffer, entries.byteOffset, rows * 4);
  const inline = Buffer.from(entries.buffer, entries.byteOffset, rows * 16);
  const mask = validityOf(vector, rows);
  const runOf = new Int32Array(rows);
  const offsetIn = new Int32Array(rows);
  const runs: Buffer[] = [];
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
    runs.push(Buffer.from(copied.buffer, copied.byteOffset, copied.byteLength));
  };
  for (let row = 0; row < rows; row++) {
    const length = words[row * 4] as number;
    if (length <= 12 || !isValid(mask, row)) continue;
    const pointer = (words[row * 4 + 2] as number) + (words[row * 4 + 3] as number) * 4294967296;
    if (pointer !== runEnd) {
      closeRun();
      runFirst = row;
      runBytes = 0;
    }
    runOf[row] = runs.length;
    offsetIn[row] = runBytes;
    runBytes += length;
    runEnd = pointer + length;
  }
  closeRun();
  return (w, row) => {
    if (!isValid(mask, row)) return writeNull(w);
    const length = words[row * 4] as number;
    w.ensure(4 + length);
    const buffer = w.buffer;
    let at = w.position;
    buffer[at] = length >>> 24;
    buffer[at + 1] = (length >>> 16) & 0xff;
    buffer[at + 2] = (length >>> 8) & 0xff;
    buffer[at + 3] = length & 0xff;
    at += 4;
    // Byte by byte below 32 bytes: Buffer.copy's call costs more than the copy (a profile of
    // 1,000,000 rows put 16% of the main thread in it).
    const source = length <= 12 ? inline : (runs[runOf[row] as number] as Buffer);
    const start = length <= 12 ? row * 16 + 4 : (offsetIn[row] as number);
    if (length < 32) for (let i = 0; i < length; i++) buffer[at + i] = source[start + i] as number;
    else source.copy(buffer, at, start, start + length);
    w.position = at + length;
  };
}

/** Any type, any format: node-api's value, then value-encoding.ts. */
function generalColumn(chunk: DuckDBDataChunk, column: number, encoded: EncodedColumn): ColumnWriter {
  const vector = chunk.getColumnVector(column);
  return (w, row) => {
    const value = vector.getItem(row);
    if (value === null) return writeNull(w);
    if (encoded.format === 1) {
      const bytes = valueBinary(value, encoded.type);
      w.int32(bytes.length);
      w.bytes(bytes);
      return;
    }
    const text = Buffer.from(valueText(value, encoded.type), 'utf8');
    w.int32(text.length);
    w.bytes(text);
  };
}

function columnWriter(chunk: DuckDBDataChunk, column: number, encoded: EncodedColumn): ColumnWriter {
  const source = encoded.source;
  if (source?.text !== undefined) {
    const rows = chunk.rowCount;
    const textVector = duckdb.data_chunk_get_vector(chunk.chunk, source.text);
    const text = stringColumn(textVector, rows);
    const mask = validityOf(textVector, rows);
    if (source.raw === undefined) return text;
    const raw = valueWriter(chunk, source.raw, encoded);
    return (w, row) => (isValid(mask, row) ? text(w, row) : raw(w, row));
  }
  return valueWriter(chunk, source?.raw ?? column, encoded);
}

function valueWriter(chunk: DuckDBDataChunk, column: number, encoded: EncodedColumn): ColumnWriter {
  const vector = duckdb.data_chunk_get_vector(chunk.chunk, column);
  const rows = chunk.rowCount;
  const { type, format } = encoded;
  if (type.typeId === DuckDBTypeId.VARCHAR || (format === 1 && type.typeId === DuckDBTypeId.BLOB))
    return stringColumn(vector, rows);
  if (format === 0) {
    if (type.typeId === DuckDBTypeId.BOOLEAN) return booleanColumn(vector, rows);
    const fast =
      numberColumn(vector, rows, type.typeId) ??
      int64Column(vector, rows, type) ??
      smallDecimalColumn(vector, rows, type);
    if (fast) return fast;
  }
  return generalColumn(chunk, column, encoded);
}

/** Writes rows [from, to) of a chunk as DataRow messages. */
export function writeDataRows(
  w: BackendWriter,
  chunk: DuckDBDataChunk,
  columns: readonly EncodedColumn[],
  from: number,
  to: number,
): void {
  const writers = columns.map((column, i) => columnWriter(chunk, i, column));
  const count = writers.length;
  for (let row = from; row < to; row++) {
    w.begin(MESSAGE.dataRow);
    w.int16(count);
    for (let i = 0; i < count; i++) (writers[i] as ColumnWriter)(w, row);
    w.end();
  }
}
