import {
  BIGINT,
  BLOB,
  BOOLEAN,
  blobValue,
  DATE,
  DOUBLE,
  type DuckDBType,
  DuckDBTypeId,
  dateValue,
  INTEGER,
  INTERVAL,
  intervalValue,
  TIME,
  TIMESTAMP,
  TIMESTAMPTZ,
  timestampTZValue,
  timestampValue,
  timeValue,
  VARCHAR,
} from '@duckdb/node-api';
import type { SqlValue } from '../storage/database.js';
import { OID, pgTypeOf, typeNameOf } from './pg-types.js';
import { SQLSTATE, WireError } from './sql-errors.js';

/**
 * A Bind message's parameter as a value DuckDB binds: never spliced into the SQL. Text goes
 * to DuckDB as VARCHAR, which casts it to the type it inferred for the `$n` (a bad value is
 * its conversion error); what DuckDB cannot read the way PostgreSQL's clients write it (bytea,
 * booleans such as `yes`) is read here first. Binary values are read by the client's type OID.
 */

export interface BoundValue {
  value: SqlValue;
  /** undefined: the type of the JavaScript value (node-api's inference). */
  type: DuckDBType | undefined;
}

const PG_EPOCH_DAYS = 10_957;
const PG_EPOCH_MICROS = 946_684_800_000_000n;

const invalidBinary = (index: number, oid: number) =>
  new WireError(
    SQLSTATE.invalidBinaryRepresentation,
    `incorrect binary data format in bind parameter ${index + 1} (${typeNameOf(oid)})`,
  );

/** bytea's text input: `\x` and hex digits, or the escape format (`\\`, `\ooo`). */
export function byteaFromText(text: string, index: number): Uint8Array {
  if (text.startsWith('\\x')) {
    const hex = text.slice(2).replace(/\s+/g, '');
    if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex))
      throw new WireError(
        SQLSTATE.invalidTextRepresentation,
        `invalid hexadecimal data in bind parameter ${index + 1}`,
      );
    return Buffer.from(hex, 'hex');
  }
  const bytes: number[] = [];
  const raw = Buffer.from(text, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i] as number;
    if (byte !== 0x5c) {
      bytes.push(byte);
      continue;
    }
    const next = raw.subarray(i + 1, i + 4).toString('latin1');
    if (next.startsWith('\\')) {
      bytes.push(0x5c);
      i++;
    } else if (/^[0-3][0-7][0-7]$/.test(next)) {
      bytes.push(Number.parseInt(next, 8));
      i += 3;
    } else throw new WireError(SQLSTATE.invalidTextRepresentation, 'invalid input syntax for type bytea');
  }
  return Uint8Array.from(bytes);
}

function booleanFromText(text: string, index: number): boolean {
  const value = text.trim().toLowerCase();
  if (value.length > 0) {
    if ('true'.startsWith(value) || 'yes'.startsWith(value) || value === 'on' || value === '1') return true;
    if ('false'.startsWith(value) || 'no'.startsWith(value) || value === 'off' || value === '0') return false;
  }
  throw new WireError(
    SQLSTATE.invalidTextRepresentation,
    `invalid input syntax for type boolean: "${text}" (bind parameter ${index + 1})`,
  );
}

function fromText(text: string, index: number, clientOid: number, duck: DuckDBType | undefined): BoundValue {
  const typeId = duck?.typeId;
  if (typeId === DuckDBTypeId.BLOB || (duck === undefined && clientOid === OID.bytea))
    return { value: blobValue(byteaFromText(text, index)), type: BLOB };
  if (typeId === DuckDBTypeId.BOOLEAN || (duck === undefined && clientOid === OID.bool))
    return { value: booleanFromText(text, index), type: BOOLEAN };
  if (duck === undefined) {
    // `SELECT $1`: DuckDB cannot tell; the client's type, when it gave one, says what the value is.
    const cast = {
      [OID.int2]: INTEGER,
      [OID.int4]: INTEGER,
      [OID.int8]: BIGINT,
      [OID.float4]: DOUBLE,
      [OID.float8]: DOUBLE,
    }[clientOid];
    if (cast && /^\s*[-+]?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?\s*$/i.test(text)) {
      if (cast === BIGINT) {
        if (/^\s*[-+]?\d+\s*$/.test(text)) return { value: BigInt(text.trim()), type: BIGINT };
      } else if (cast === INTEGER && !/^\s*[-+]?\d+\s*$/.test(text)) {
        // Not an integer: DuckDB's cast refuses it as PostgreSQL would.
      } else return { value: Number(text), type: cast };
    }
  }
  return { value: text, type: VARCHAR };
}

function fromBinary(bytes: Buffer, index: number, oid: number): BoundValue {
  const expect = (length: number) => {
    if (bytes.length !== length) throw invalidBinary(index, oid);
  };
  switch (oid) {
    case OID.bool:
      expect(1);
      return { value: bytes[0] !== 0, type: BOOLEAN };
    case OID.int2:
      expect(2);
      return { value: bytes.readInt16BE(0), type: INTEGER };
    case OID.int4:
      expect(4);
      return { value: bytes.readInt32BE(0), type: INTEGER };
    case OID.oid:
      expect(4);
      return { value: bytes.readUInt32BE(0), type: BIGINT };
    case OID.int8:
      expect(8);
      return { value: bytes.readBigInt64BE(0), type: BIGINT };
    case OID.float4:
      expect(4);
      return { value: bytes.readFloatBE(0), type: DOUBLE };
    case OID.float8:
      expect(8);
      return { value: bytes.readDoubleBE(0), type: DOUBLE };
    case OID.text:
    case OID.varchar:
    case OID.bpchar:
    case OID.name:
    case OID.json:
    case OID.unknown:
      return { value: bytes.toString('utf8'), type: VARCHAR };
    case OID.bytea:
      return { value: blobValue(Uint8Array.from(bytes)), type: BLOB };
    case OID.date:
      expect(4);
      return { value: dateValue(bytes.readInt32BE(0) + PG_EPOCH_DAYS), type: DATE };
    case OID.timestamp:
      expect(8);
      return { value: timestampValue(bytes.readBigInt64BE(0) + PG_EPOCH_MICROS), type: TIMESTAMP };
    case OID.timestamptz:
      expect(8);
      return { value: timestampTZValue(bytes.readBigInt64BE(0) + PG_EPOCH_MICROS), type: TIMESTAMPTZ };
    case OID.time:
      expect(8);
      return { value: timeValue(bytes.readBigInt64BE(0)), type: TIME };
    case OID.interval:
      expect(16);
      return {
        value: intervalValue(bytes.readInt32BE(12), bytes.readInt32BE(8), bytes.readBigInt64BE(0)),
        type: INTERVAL,
      };
    case OID.uuid:
      expect(16);
      return { value: formatUuid(bytes), type: VARCHAR };
    case OID.numeric:
      return { value: numericFromBinary(bytes, index), type: VARCHAR };
    default:
      throw new WireError(
        SQLSTATE.featureNotSupported,
        `binary format for parameters of type ${typeNameOf(oid)} is not supported; send it as text`,
      );
  }
}

function formatUuid(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** numeric's binary format back to its text (exact), which DuckDB casts to the parameter's type. */
export function numericFromBinary(bytes: Buffer, index: number): string {
  if (bytes.length < 8) throw invalidBinary(index, OID.numeric);
  const count = bytes.readInt16BE(0);
  const weight = bytes.readInt16BE(2);
  const sign = bytes.readUInt16BE(4);
  const scale = bytes.readInt16BE(6);
  if (count < 0 || bytes.length !== 8 + 2 * count || scale < 0) throw invalidBinary(index, OID.numeric);
  if (sign === 0xc000) return 'NaN';
  let digits = '';
  for (let i = 0; i < count; i++) {
    const group = bytes.readInt16BE(8 + 2 * i);
    if (group < 0 || group > 9999) throw invalidBinary(index, OID.numeric);
    digits += String(group).padStart(4, '0');
  }
  // digits holds groups from 10000^weight down; the point sits after (weight + 1) groups.
  const pointAt = (weight + 1) * 4;
  const padded = pointAt > digits.length ? digits.padEnd(pointAt, '0') : digits;
  const whole = pointAt <= 0 ? '0' : padded.slice(0, pointAt).replace(/^0+(?=\d)/, '');
  const fractionDigits = pointAt < 0 ? '0'.repeat(-pointAt) + padded : padded.slice(Math.max(pointAt, 0));
  const fraction = fractionDigits.padEnd(scale, '0').slice(0, scale);
  return `${sign === 0x4000 ? '-' : ''}${whole}${scale > 0 ? `.${fraction}` : ''}`;
}

/** A DuckDB type for a PostgreSQL type OID, where one fits; VARCHAR otherwise. */
export function pgTypeToDuckDB(oid: number): DuckDBType {
  const types: Record<number, DuckDBType> = {
    [OID.bool]: BOOLEAN,
    [OID.int2]: INTEGER,
    [OID.int4]: INTEGER,
    [OID.int8]: BIGINT,
    [OID.float4]: DOUBLE,
    [OID.float8]: DOUBLE,
    [OID.bytea]: BLOB,
    [OID.date]: DATE,
    [OID.time]: TIME,
    [OID.timestamp]: TIMESTAMP,
    [OID.timestamptz]: TIMESTAMPTZ,
    [OID.interval]: INTERVAL,
  };
  return types[oid] ?? VARCHAR;
}

/** The value to bind for parameter `index` (0-based). */
export function parameterValue(
  raw: Buffer | null,
  format: number,
  index: number,
  clientOid: number,
  duck: DuckDBType | undefined,
): BoundValue {
  if (raw === null) return { value: null, type: duck };
  if (format === 0) {
    const text = raw.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(raw))
      throw new WireError(
        '22021',
        `invalid byte sequence for encoding "UTF8" in bind parameter ${index + 1}`,
      );
    return fromText(text, index, clientOid, duck);
  }
  // No type from the client (node-postgres sends a Buffer so): the type DuckDB inferred, as
  // PostgreSQL takes the one it resolved; bytes when nothing says more.
  const oid = clientOid !== 0 ? clientOid : duck ? pgTypeOf(duck).oid : OID.bytea;
  return fromBinary(raw, index, oid);
}
