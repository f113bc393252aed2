import {
  type DuckDBArrayValue,
  type DuckDBBitValue,
  type DuckDBBlobValue,
  type DuckDBDateValue,
  type DuckDBDecimalValue,
  type DuckDBIntervalValue,
  type DuckDBListValue,
  type DuckDBTimeNSValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  type DuckDBTimeTZValue,
  type DuckDBTimeValue,
  type DuckDBType,
  DuckDBTypeId,
  type DuckDBUUIDValue,
  type DuckDBValue,
} from '@duckdb/node-api';
import { decimalText } from '../storage/decimal-text.js';
import { OID, type PgType, pgTypeOf } from './pg-types.js';
import {
  arrayElementText,
  byteaText,
  dateText,
  float4Text,
  float8Text,
  intervalText,
  timestampText,
  timeText,
  zoneOffsetText,
} from './text-values.js';

/**
 * One value in PostgreSQL's text or binary format, from the value node-api reads out of a
 * chunk. The general path: row-encoding.ts takes the common types straight from DuckDB's
 * vectors and comes here for the rest (lists, intervals, UUIDs, …) and for binary.
 */

/** The value as microseconds since 1970, for every kind of timestamp. */
function timestampMicros(value: DuckDBValue): bigint | undefined {
  if (value instanceof DuckDBTimestampValue || value instanceof DuckDBTimestampTZValue) return value.micros;
  if (value instanceof DuckDBTimestampSecondsValue) return value.seconds * 1_000_000n;
  if (value instanceof DuckDBTimestampMillisecondsValue) return value.millis * 1_000n;
  if (value instanceof DuckDBTimestampNanosecondsValue) {
    const micros = value.nanos / 1_000n;
    return value.nanos < 0n && micros * 1_000n !== value.nanos ? micros - 1n : micros;
  }
  return undefined;
}

/** DuckDB's infinities of the other timestamp kinds, as microsecond ones. */
function timestampOf(value: DuckDBValue, type: DuckDBType): bigint {
  const micros = timestampMicros(value) as bigint;
  const infinite = {
    [DuckDBTypeId.TIMESTAMP_S]: DuckDBTimestampSecondsValue.PosInf.seconds,
    [DuckDBTypeId.TIMESTAMP_MS]: DuckDBTimestampMillisecondsValue.PosInf.millis,
    [DuckDBTypeId.TIMESTAMP_NS]: DuckDBTimestampNanosecondsValue.PosInf.nanos,
  }[type.typeId as number];
  if (infinite === undefined) return micros;
  const raw =
    value instanceof DuckDBTimestampSecondsValue
      ? value.seconds
      : value instanceof DuckDBTimestampMillisecondsValue
        ? value.millis
        : (value as DuckDBTimestampNanosecondsValue).nanos;
  if (raw === infinite) return DuckDBTimestampValue.PosInf.micros;
  if (raw === -infinite) return DuckDBTimestampValue.NegInf.micros;
  return micros;
}

/** PostgreSQL's text of a value (not NULL) of the given DuckDB type. */
export function valueText(value: DuckDBValue, type: DuckDBType): string {
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return value ? 't' : 'f';
    case DuckDBTypeId.FLOAT:
      return float4Text(value as number);
    case DuckDBTypeId.DOUBLE:
      return float8Text(value as number);
    case DuckDBTypeId.DECIMAL:
      return decimalText((value as DuckDBDecimalValue).value, (value as DuckDBDecimalValue).scale);
    case DuckDBTypeId.BLOB:
      return byteaText((value as DuckDBBlobValue).bytes);
    case DuckDBTypeId.DATE:
      return dateText((value as DuckDBDateValue).days);
    case DuckDBTypeId.TIME:
      return timeText(Number((value as DuckDBTimeValue).micros));
    case DuckDBTypeId.TIME_NS:
      return timeText(Number((value as DuckDBTimeNSValue).nanos / 1_000n));
    case DuckDBTypeId.TIME_TZ: {
      const time = value as DuckDBTimeTZValue;
      return timeText(Number(time.micros)) + zoneOffsetText(time.offset);
    }
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return timestampText(timestampOf(value, type), false);
    case DuckDBTypeId.TIMESTAMP_TZ:
      return timestampText((value as DuckDBTimestampTZValue).micros, true);
    case DuckDBTypeId.INTERVAL: {
      const interval = value as DuckDBIntervalValue;
      return intervalText(interval.months, interval.days, interval.micros);
    }
    case DuckDBTypeId.UUID:
      return (value as DuckDBUUIDValue).toString();
    case DuckDBTypeId.BIT:
      return (value as DuckDBBitValue).toString();
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY:
      return arrayText(value as DuckDBListValue | DuckDBArrayValue, type.valueType);
    default:
      // Integers of every width (number or bigint), VARCHAR, ENUM; STRUCT, MAP, UNION in DuckDB's notation.
      return String(value);
  }
}

/** An array literal: `{1,2,NULL}`, nested lists as nested braces. */
function arrayText(list: DuckDBListValue | DuckDBArrayValue, elementType: DuckDBType): string {
  const nested = elementType.typeId === DuckDBTypeId.LIST || elementType.typeId === DuckDBTypeId.ARRAY;
  const items = list.items.map((item) => {
    if (item === null) return 'NULL';
    const text = valueText(item, elementType);
    return nested ? text : arrayElementText(text);
  });
  return `{${items.join(',')}}`;
}

/** Days from 1970-01-01 to PostgreSQL's epoch, 2000-01-01. */
const PG_EPOCH_DAYS = 10_957;
const PG_EPOCH_MICROS = 946_684_800_000_000n;
const INT64_MAX = 9223372036854775807n;

/** PostgreSQL's binary format of a value (not NULL) of the given DuckDB type. */
export function valueBinary(value: DuckDBValue, type: DuckDBType): Buffer {
  const pg = pgTypeOf(type);
  switch (pg.oid) {
    case OID.bool:
      return Buffer.from([value ? 1 : 0]);
    case OID.int2:
    case OID.int4:
    case OID.int8:
      return integerBinary(BigInt(value as number | bigint), pg.length);
    case OID.float4:
      return floatBinary(value as number, 4);
    case OID.float8:
      return floatBinary(value as number, 8);
    case OID.bytea:
      return Buffer.from((value as DuckDBBlobValue).bytes);
    case OID.numeric:
      return numericBinary(valueText(value, type));
    case OID.date:
      return dateBinary((value as DuckDBDateValue).days);
    case OID.timestamp:
    case OID.timestamptz:
      return timestampBinary(value, type);
    case OID.time:
      return integerBinary(
        type.typeId === DuckDBTypeId.TIME_NS
          ? (value as DuckDBTimeNSValue).nanos / 1_000n
          : (value as DuckDBTimeValue).micros,
        8,
      );
    case OID.timetz:
      return timetzBinary(value as DuckDBTimeTZValue);
    case OID.interval:
      return intervalBinary(value as DuckDBIntervalValue);
    case OID.uuid:
      return uuidBinary(value as DuckDBUUIDValue);
    default:
      if (type.typeId === DuckDBTypeId.LIST || type.typeId === DuckDBTypeId.ARRAY)
        return arrayBinary(value as DuckDBListValue | DuckDBArrayValue, type.valueType, pg);
      return Buffer.from(valueText(value, type), 'utf8');
  }
}

function floatBinary(value: number, bytes: number): Buffer {
  const buffer = Buffer.allocUnsafe(bytes);
  if (bytes === 4) buffer.writeFloatBE(value);
  else buffer.writeDoubleBE(value);
  return buffer;
}

/** Days since 2000-01-01; DuckDB's infinities as PostgreSQL's. */
function dateBinary(days: number): Buffer {
  const buffer = Buffer.allocUnsafe(4);
  buffer.writeInt32BE(
    Math.abs(days) === 2147483647 ? (days > 0 ? 2147483647 : -2147483648) : days - PG_EPOCH_DAYS,
  );
  return buffer;
}

/** Microseconds since 2000-01-01; DuckDB's infinities as PostgreSQL's. */
function timestampBinary(value: DuckDBValue, type: DuckDBType): Buffer {
  const micros =
    type.typeId === DuckDBTypeId.TIMESTAMP_TZ
      ? (value as DuckDBTimestampTZValue).micros
      : timestampOf(value, type);
  const pgMicros =
    micros === INT64_MAX ? INT64_MAX : micros === -INT64_MAX ? -INT64_MAX - 1n : micros - PG_EPOCH_MICROS;
  return integerBinary(pgMicros, 8);
}

function timetzBinary(time: DuckDBTimeTZValue): Buffer {
  const buffer = Buffer.allocUnsafe(12);
  buffer.writeBigInt64BE(time.micros);
  buffer.writeInt32BE(-time.offset, 8);
  return buffer;
}

function intervalBinary(interval: DuckDBIntervalValue): Buffer {
  const buffer = Buffer.allocUnsafe(16);
  buffer.writeBigInt64BE(interval.micros);
  buffer.writeInt32BE(interval.days, 8);
  buffer.writeInt32BE(interval.months, 12);
  return buffer;
}

function uuidBinary(uuid: DuckDBUUIDValue): Buffer {
  const buffer = Buffer.allocUnsafe(16);
  const n = uuid.toUint128();
  buffer.writeBigUInt64BE(n >> 64n);
  buffer.writeBigUInt64BE(n & 0xffffffffffffffffn, 8);
  return buffer;
}

function integerBinary(value: bigint, bytes: number): Buffer {
  const buffer = Buffer.allocUnsafe(bytes);
  if (bytes === 2) buffer.writeInt16BE(Number(value));
  else if (bytes === 4) buffer.writeInt32BE(Number(value));
  else buffer.writeBigInt64BE(value);
  return buffer;
}

/** numeric's binary format: base-10000 digits with weight, sign and display scale. */
export function numericBinary(text: string): Buffer {
  if (text === 'NaN') return Buffer.from([0, 0, 0, 0, 0xc0, 0, 0, 0]);
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? text.slice(1) : text).split('.');
  const wholeDigits = whole.replace(/^0+/, '');
  const paddedWhole = wholeDigits.padStart(Math.ceil(wholeDigits.length / 4) * 4, '0');
  const paddedFraction = fraction.padEnd(Math.ceil(fraction.length / 4) * 4, '0');
  const groups: number[] = [];
  for (let i = 0; i < paddedWhole.length; i += 4) groups.push(Number(paddedWhole.slice(i, i + 4)));
  for (let i = 0; i < paddedFraction.length; i += 4) groups.push(Number(paddedFraction.slice(i, i + 4)));
  let weight = paddedWhole.length / 4 - 1;
  while (groups.length > 0 && groups[0] === 0) {
    groups.shift();
    weight--;
  }
  while (groups.length > 0 && groups[groups.length - 1] === 0) groups.pop();
  if (groups.length === 0) weight = 0;
  const buffer = Buffer.allocUnsafe(8 + 2 * groups.length);
  buffer.writeInt16BE(groups.length, 0);
  buffer.writeInt16BE(weight, 2);
  buffer.writeUInt16BE(negative && groups.length > 0 ? 0x4000 : 0, 4);
  buffer.writeInt16BE(fraction.length, 6);
  for (const [i, group] of groups.entries()) buffer.writeInt16BE(group, 8 + 2 * i);
  return buffer;
}

/** A one-dimensional array in binary (nested lists are refused by the caller's format check). */
function arrayBinary(list: DuckDBListValue | DuckDBArrayValue, elementType: DuckDBType, pg: PgType): Buffer {
  const elements = list.items.map((item) => (item === null ? null : valueBinary(item, elementType)));
  const head = Buffer.allocUnsafe(20);
  head.writeInt32BE(1, 0);
  head.writeInt32BE(elements.includes(null) ? 1 : 0, 4);
  head.writeInt32BE(pgTypeOf(elementType).oid, 8);
  head.writeInt32BE(elements.length, 12);
  head.writeInt32BE(1, 16);
  void pg;
  const parts: Buffer[] = [head];
  for (const element of elements) {
    const length = Buffer.allocUnsafe(4);
    length.writeInt32BE(element === null ? -1 : element.length);
    parts.push(length);
    if (element) parts.push(element);
  }
  return Buffer.concat(parts);
}

/** Whether a column of this type can be sent in binary (every scalar; arrays of one dimension). */
export function hasBinaryFormat(type: DuckDBType): boolean {
  if (type.typeId === DuckDBTypeId.LIST || type.typeId === DuckDBTypeId.ARRAY) {
    const element = type.valueType;
    return (
      element.typeId !== DuckDBTypeId.LIST &&
      element.typeId !== DuckDBTypeId.ARRAY &&
      hasBinaryFormat(element)
    );
  }
  return (
    pgTypeOf(type).oid !== OID.text ||
    type.typeId === DuckDBTypeId.VARCHAR ||
    type.typeId === DuckDBTypeId.ENUM
  );
}
