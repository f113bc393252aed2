import { type DuckDBType, DuckDBTypeId } from '@duckdb/node-api';

/**
 * DuckDB's types as PostgreSQL's: the type OID, length and modifier a RowDescription
 * announces (OIDs from PostgreSQL 15's pg_type.dat). Integers too wide for the type a
 * driver would read them as are numeric, so every digit arrives; types PostgreSQL has no
 * equivalent for (STRUCT, MAP, UNION, …) are text in DuckDB's own notation.
 */

export const OID = {
  bool: 16,
  bytea: 17,
  char: 18,
  name: 19,
  int8: 20,
  int2: 21,
  int2vector: 22,
  int4: 23,
  regproc: 24,
  text: 25,
  oid: 26,
  oidvector: 30,
  json: 114,
  pgNodeTree: 194,
  float4: 700,
  float8: 701,
  unknown: 705,
  bpchar: 1042,
  varchar: 1043,
  date: 1082,
  time: 1083,
  timestamp: 1114,
  timestamptz: 1184,
  interval: 1186,
  timetz: 1266,
  bit: 1560,
  varbit: 1562,
  numeric: 1700,
  regclass: 2205,
  regtype: 2206,
  uuid: 2950,
  jsonb: 3802,
  regnamespace: 4089,
} as const;

/** Array type OIDs by element type OID. */
export const ARRAY_OF: ReadonlyMap<number, number> = new Map([
  [OID.bool, 1000],
  [OID.bytea, 1001],
  [OID.char, 1002],
  [OID.name, 1003],
  [OID.int2, 1005],
  [OID.int4, 1007],
  [OID.text, 1009],
  [OID.varchar, 1015],
  [OID.int8, 1016],
  [OID.float4, 1021],
  [OID.float8, 1022],
  [OID.oid, 1028],
  [OID.date, 1182],
  [OID.time, 1183],
  [OID.timestamp, 1115],
  [OID.timestamptz, 1185],
  [OID.interval, 1187],
  [OID.numeric, 1231],
  [OID.timetz, 1270],
  [OID.uuid, 2951],
  [OID.json, 199],
  [OID.jsonb, 3807],
  [OID.varbit, 1563],
]);

export const ELEMENT_OF: ReadonlyMap<number, number> = new Map([...ARRAY_OF].map(([e, a]) => [a, e]));

export interface PgType {
  oid: number;
  /** typlen: bytes of a fixed-length type, -1 for variable length. */
  length: number;
  /** typmod: numeric's precision and scale, else -1. */
  modifier: number;
}

const fixed = (oid: number, length: number): PgType => ({ oid, length, modifier: -1 });
const variable = (oid: number): PgType => ({ oid, length: -1, modifier: -1 });

/** Types named by an alias of the catalog database (catalog-database.ts) keep PostgreSQL's OID. */
const BY_ALIAS: ReadonlyMap<string, PgType> = new Map([
  ['json', variable(OID.json)],
  ['oid', fixed(OID.oid, 4)],
  ['name', fixed(OID.name, 64)],
  ['regclass', fixed(OID.regclass, 4)],
  ['regtype', fixed(OID.regtype, 4)],
  ['regproc', fixed(OID.regproc, 4)],
  ['regnamespace', fixed(OID.regnamespace, 4)],
  ['char', fixed(OID.char, 1)],
  ['pg_node_tree', variable(OID.pgNodeTree)],
]);

export function pgTypeOf(type: DuckDBType): PgType {
  const aliased = type.alias !== undefined ? BY_ALIAS.get(type.alias.toLowerCase()) : undefined;
  if (aliased) return aliased;
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return fixed(OID.bool, 1);
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.UTINYINT:
      return fixed(OID.int2, 2);
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.USMALLINT:
      return fixed(OID.int4, 4);
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UINTEGER:
      return fixed(OID.int8, 8);
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
    case DuckDBTypeId.BIGNUM:
      return variable(OID.numeric);
    case DuckDBTypeId.DECIMAL:
      return { oid: OID.numeric, length: -1, modifier: ((type.width << 16) | type.scale) + 4 };
    case DuckDBTypeId.FLOAT:
      return fixed(OID.float4, 4);
    case DuckDBTypeId.DOUBLE:
      return fixed(OID.float8, 8);
    case DuckDBTypeId.BLOB:
      return variable(OID.bytea);
    case DuckDBTypeId.DATE:
      return fixed(OID.date, 4);
    case DuckDBTypeId.TIME:
    case DuckDBTypeId.TIME_NS:
      return fixed(OID.time, 8);
    case DuckDBTypeId.TIME_TZ:
      return fixed(OID.timetz, 12);
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return fixed(OID.timestamp, 8);
    case DuckDBTypeId.TIMESTAMP_TZ:
      return fixed(OID.timestamptz, 8);
    case DuckDBTypeId.INTERVAL:
      return fixed(OID.interval, 16);
    case DuckDBTypeId.UUID:
      return fixed(OID.uuid, 16);
    case DuckDBTypeId.BIT:
      return variable(OID.varbit);
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY:
      return variable(ARRAY_OF.get(pgTypeOf(type.valueType).oid) ?? 1009);
    default:
      // VARCHAR, ENUM, STRUCT, MAP, UNION, VARIANT, GEOMETRY, NULL: text.
      return variable(OID.text);
  }
}

/** The type of an OID as a name PostgreSQL's format_type would give, for messages. */
export function typeNameOf(oid: number): string {
  for (const [name, value] of Object.entries(OID)) if (value === oid) return name;
  return ELEMENT_OF.has(oid) ? `${typeNameOf(ELEMENT_OF.get(oid) as number)}[]` : String(oid);
}

export interface NamedPgType extends PgType {
  /** format_type's text: `integer`, `numeric(10,2)`, `timestamp with time zone`, `text[]`. */
  display: string;
  /** pg_type.typname: `int4`, `_text`. */
  typname: string;
  /** information_schema.columns.data_type: the display name, or ARRAY. */
  dataType: string;
}

const NAMED: Record<string, [oid: number, length: number, typname: string, display: string]> = {
  boolean: [OID.bool, 1, 'bool', 'boolean'],
  smallint: [OID.int2, 2, 'int2', 'smallint'],
  integer: [OID.int4, 4, 'int4', 'integer'],
  bigint: [OID.int8, 8, 'int8', 'bigint'],
  numeric: [OID.numeric, -1, 'numeric', 'numeric'],
  real: [OID.float4, 4, 'float4', 'real'],
  double: [OID.float8, 8, 'float8', 'double precision'],
  text: [OID.text, -1, 'text', 'text'],
  json: [OID.json, -1, 'json', 'json'],
  bytea: [OID.bytea, -1, 'bytea', 'bytea'],
  date: [OID.date, 4, 'date', 'date'],
  time: [OID.time, 8, 'time', 'time without time zone'],
  timetz: [OID.timetz, 12, 'timetz', 'time with time zone'],
  timestamp: [OID.timestamp, 8, 'timestamp', 'timestamp without time zone'],
  timestamptz: [OID.timestamptz, 8, 'timestamptz', 'timestamp with time zone'],
  interval: [OID.interval, 16, 'interval', 'interval'],
  uuid: [OID.uuid, 16, 'uuid', 'uuid'],
  varbit: [OID.varbit, -1, 'varbit', 'bit varying'],
};

/** DuckDB type names (as DESCRIBE and the table list write them, and the create API's) by kind. */
const BY_DUCKDB_NAME: Record<string, string> = {
  boolean: 'boolean',
  tinyint: 'smallint',
  smallint: 'smallint',
  utinyint: 'smallint',
  integer: 'integer',
  usmallint: 'integer',
  bigint: 'bigint',
  uinteger: 'bigint',
  ubigint: 'numeric',
  hugeint: 'numeric',
  uhugeint: 'numeric',
  bignum: 'numeric',
  varint: 'numeric',
  int256: 'numeric',
  uint256: 'numeric',
  float: 'real',
  real: 'real',
  double: 'double',
  varchar: 'text',
  json: 'json',
  blob: 'bytea',
  varbinary: 'bytea',
  date: 'date',
  time: 'time',
  'time with time zone': 'timetz',
  timestamp: 'timestamp',
  timestamp_s: 'timestamp',
  timestamp_ms: 'timestamp',
  timestamp_ns: 'timestamp',
  'timestamp with time zone': 'timestamptz',
  interval: 'interval',
  uuid: 'uuid',
  bit: 'varbit',
};

/** A column's type, from DuckDB's name for it (`decimal(18,3)`, `varchar[]`, `int256`), as the catalog shows it. */
export function pgTypeOfName(name: string): NamedPgType {
  const lower = name.trim().toLowerCase();
  if (lower.endsWith('[]')) {
    const element = pgTypeOfName(lower.slice(0, -2));
    const oid = ARRAY_OF.get(element.oid) ?? 1009;
    return {
      oid,
      length: -1,
      modifier: -1,
      display: `${element.display.replace(/\(.*\)$/, '')}[]`,
      typname: `_${element.typname}`,
      dataType: 'ARRAY',
    };
  }
  const decimal = /^decimal\((\d+),\s*(\d+)\)$/.exec(lower);
  if (decimal) {
    const [precision, scale] = [Number(decimal[1]), Number(decimal[2])];
    return {
      oid: OID.numeric,
      length: -1,
      modifier: ((precision << 16) | scale) + 4,
      display: `numeric(${precision},${scale})`,
      typname: 'numeric',
      dataType: 'numeric',
    };
  }
  const [oid, length, typname, display] = NAMED[BY_DUCKDB_NAME[lower] ?? 'text'] as [
    number,
    number,
    string,
    string,
  ];
  return { oid, length, modifier: -1, display, typname, dataType: display };
}
