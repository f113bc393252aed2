/**
 * What the language needs to know about a column's DuckDB type: which literals fit it and how
 * a value is written in SQL for an exact comparison. SQL type names used in casts come from
 * this closed list, never from the type string the results layer passes in.
 */
export type IntegerSqlType =
  | 'TINYINT'
  | 'SMALLINT'
  | 'INTEGER'
  | 'BIGINT'
  | 'HUGEINT'
  | 'UTINYINT'
  | 'USMALLINT'
  | 'UINTEGER'
  | 'UBIGINT'
  | 'UHUGEINT';

export type TimestampSqlType = 'TIMESTAMP' | 'TIMESTAMPTZ' | 'TIMESTAMP_NS';

export type ColumnType =
  | { kind: 'integer'; sqlType: IntegerSqlType; min: bigint; max: bigint }
  | { kind: 'bignum' }
  | { kind: 'decimal'; precision: number; scale: number }
  /** FLOAT and DOUBLE: compared as DOUBLE, which holds every FLOAT exactly. */
  | { kind: 'float' }
  | { kind: 'varchar' }
  | { kind: 'boolean' }
  | { kind: 'date' }
  | { kind: 'timestamp'; sqlType: TimestampSqlType; fractionDigits: 6 | 9 }
  | { kind: 'blob' }
  /** Any other type (time, uuid, interval, enum, json, lists, ...): compared as its text. */
  | { kind: 'text' };

function integer(sqlType: IntegerSqlType, bits: number, signed: boolean): ColumnType {
  const span = 1n << BigInt(bits);
  return signed
    ? { kind: 'integer', sqlType, min: -(span >> 1n), max: (span >> 1n) - 1n }
    : { kind: 'integer', sqlType, min: 0n, max: span - 1n };
}

const INTEGERS: ReadonlyMap<string, ColumnType> = new Map([
  ...['tinyint', 'int1'].map((n) => [n, integer('TINYINT', 8, true)] as const),
  ...['smallint', 'int2', 'short'].map((n) => [n, integer('SMALLINT', 16, true)] as const),
  ...['integer', 'int4', 'int', 'signed'].map((n) => [n, integer('INTEGER', 32, true)] as const),
  ...['bigint', 'int8', 'long'].map((n) => [n, integer('BIGINT', 64, true)] as const),
  ...['hugeint', 'int128'].map((n) => [n, integer('HUGEINT', 128, true)] as const),
  ['utinyint', integer('UTINYINT', 8, false)],
  ['usmallint', integer('USMALLINT', 16, false)],
  ['uinteger', integer('UINTEGER', 32, false)],
  ['ubigint', integer('UBIGINT', 64, false)],
  ['uhugeint', integer('UHUGEINT', 128, false)],
]);

const SIMPLE: ReadonlyMap<string, ColumnType> = new Map<string, ColumnType>([
  ...['bignum', 'varint'].map((n) => [n, { kind: 'bignum' }] as const),
  ...['double', 'float8', 'float', 'float4', 'real'].map((n) => [n, { kind: 'float' }] as const),
  ...['varchar', 'text', 'string', 'char', 'bpchar'].map((n) => [n, { kind: 'varchar' }] as const),
  ...['boolean', 'bool', 'logical'].map((n) => [n, { kind: 'boolean' }] as const),
  ['date', { kind: 'date' }],
  ...[
    'timestamp',
    'datetime',
    'timestamp without time zone',
    'timestamp_us',
    'timestamp_ms',
    'timestamp_s',
  ].map((n) => [n, { kind: 'timestamp', sqlType: 'TIMESTAMP', fractionDigits: 6 }] as const),
  ...['timestamp with time zone', 'timestamptz'].map(
    (n) => [n, { kind: 'timestamp', sqlType: 'TIMESTAMPTZ', fractionDigits: 6 }] as const,
  ),
  ['timestamp_ns', { kind: 'timestamp', sqlType: 'TIMESTAMP_NS', fractionDigits: 9 }],
  ...['blob', 'bytea', 'binary', 'varbinary'].map((n) => [n, { kind: 'blob' }] as const),
]);

const DECIMAL = /^(?:decimal|numeric)(?:\((\d+)\s*(?:,\s*(\d+))?\))?$/;
const SIZED_VARCHAR = /^(?:varchar|char|bpchar)\(\d+\)$/;

export function classifyType(typeName: string): ColumnType {
  const name = typeName.trim().toLowerCase().replace(/\s+/g, ' ');
  const known = INTEGERS.get(name) ?? SIMPLE.get(name);
  if (known !== undefined) {
    return known;
  }
  const decimal = DECIMAL.exec(name);
  if (decimal !== null) {
    // DuckDB's default DECIMAL is DECIMAL(18,3).
    const precision = decimal[1] === undefined ? 18 : Number(decimal[1]);
    const scale = decimal[1] === undefined ? 3 : Number(decimal[2] ?? 0);
    if (precision >= 1 && precision <= 38 && scale <= precision) {
      return { kind: 'decimal', precision, scale };
    }
  }
  if (SIZED_VARCHAR.test(name)) {
    return { kind: 'varchar' };
  }
  return { kind: 'text' };
}
