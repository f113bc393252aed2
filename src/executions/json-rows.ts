import {
  type DuckDBBlobValue,
  type DuckDBDataChunk,
  type DuckDBDateValue,
  type DuckDBDecimalValue,
  type DuckDBTimestampTZValue,
  type DuckDBTimestampValue,
  type DuckDBType,
  DuckDBTypeId,
} from '@duckdb/node-api';
import { decimalText } from '../storage/decimal-text.js';
import type { SnapshotColumn } from './execution.js';

/**
 * Result rows as JSON object texts, rendered in JavaScript from DuckDB's values: the same
 * text, byte for byte, that row-rendering.ts makes DuckDB write (`jsonRowExpression`), for
 * the types whose rule is plain here. A small result is rendered so without a table to
 * read it from (small-result.ts). Any value whose text is not certain here (a type outside
 * RENDERED, a date or time outside years 1 to 9999) makes the whole rendering undefined, and
 * the run takes the SQL renderer. test/executions/json-rows.test.ts holds both renderers to
 * the same bytes over every type and edge value.
 *
 * Measured against DuckDB 1.5 (scratch script, 2026-11-27): to_json writes a double as
 * JavaScript's shortest round-trip digits, with `.0` after an integral value and `e21` for
 * JavaScript's `e+21` (19,148 doubles of every exponent, no difference); a string as
 * JSON.stringify does, except the `\u00XX` escapes of control characters in upper case.
 */

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const RENDERED: ReadonlySet<DuckDBTypeId> = new Set([
  DuckDBTypeId.BOOLEAN,
  DuckDBTypeId.TINYINT,
  DuckDBTypeId.SMALLINT,
  DuckDBTypeId.INTEGER,
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.UTINYINT,
  DuckDBTypeId.USMALLINT,
  DuckDBTypeId.UINTEGER,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UHUGEINT,
  DuckDBTypeId.BIGNUM,
  DuckDBTypeId.DOUBLE,
  DuckDBTypeId.DECIMAL,
  DuckDBTypeId.VARCHAR,
  DuckDBTypeId.DATE,
  DuckDBTypeId.TIMESTAMP,
  DuckDBTypeId.TIMESTAMP_TZ,
  DuckDBTypeId.BLOB,
]);

/**
 * Whether values of this type are rendered here. Not a type under an alias: node-api gives a
 * `JSON` column as VARCHAR with alias `JSON`, which to_json embeds as JSON, not as a string.
 */
export function isRendered(type: DuckDBType): boolean {
  return RENDERED.has(type.typeId) && type.alias === undefined;
}

/** The names of the types rendered here, as DESCRIBE writes them (SnapshotColumn.type). */
export function isRenderedTypeName(name: string): boolean {
  return /^(boolean|tinyint|smallint|integer|bigint|utinyint|usmallint|uinteger|ubigint|hugeint|uhugeint|bignum|double|decimal\(\d+,\d+\)|varchar|date|timestamp|timestamp with time zone|blob)$/.test(
    name,
  );
}

const ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

// biome-ignore lint/suspicious/noControlCharactersInRegex: escaping exactly those
const ESCAPED = /["\\\u0000-\u001f]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: escaping exactly those
const ESCAPED_ALL = /["\\\u0000-\u001f]/g;

/** A string as DuckDB's to_json writes it. */
export function jsonString(text: string): string {
  if (!ESCAPED.test(text)) return `"${text}"`;
  const escaped = text.replace(
    ESCAPED_ALL,
    (c) => ESCAPES[c] ?? `\\u00${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
  return `"${escaped}"`;
}

/** A finite double as DuckDB's to_json writes it. */
function doubleJson(value: number): string {
  if (Object.is(value, -0)) return '-0.0';
  const text = String(value).replace('e+', 'e');
  return /[.e]/.test(text) ? text : `${text}.0`;
}

/** Exact powers of ten up to 10^22 (every scale a decimal of 15 digits can have). */
const POWERS = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

/** `YYYY-MM-DDTHH:MM:SS.mmmZ` of a time in ms since 1970, or undefined outside years 1 to 9999. */
function isoOf(ms: number): string | undefined {
  if (!Number.isFinite(ms)) return undefined;
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  if (!(year >= 1 && year <= 9999)) return undefined;
  return date.toISOString();
}

/** Turns a value into its JSON text; undefined: not certain here. */
type ValueJson = (value: unknown) => string | undefined;

function valueJson(type: DuckDBType): ValueJson | undefined {
  switch (type.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return (v) => (v ? 'true' : 'false');
    case DuckDBTypeId.TINYINT:
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.UTINYINT:
    case DuckDBTypeId.USMALLINT:
    case DuckDBTypeId.UINTEGER:
      return (v) => String(v);
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UBIGINT:
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
    case DuckDBTypeId.BIGNUM:
      return (v) => {
        const n = v as bigint;
        return n >= -MAX_SAFE && n <= MAX_SAFE ? n.toString() : `"${n}"`;
      };
    case DuckDBTypeId.DOUBLE:
      return (v) => {
        const n = v as number;
        if (Number.isFinite(n)) return doubleJson(n);
        if (Number.isNaN(n)) return '"NaN"';
        return n > 0 ? '"Infinity"' : '"-Infinity"';
      };
    case DuckDBTypeId.DECIMAL: {
      const scale = (type as { scale: number }).scale;
      if ((type as { width: number }).width > 15)
        return (v) => `"${decimalText((v as DuckDBDecimalValue).value, scale)}"`;
      // As CAST(… AS DOUBLE): the exact integer divided by an exact power of ten, rounded once.
      const power = POWERS[scale] as number;
      return (v) => doubleJson(Number((v as DuckDBDecimalValue).value) / power);
    }
    case DuckDBTypeId.VARCHAR:
      return (v) => jsonString(v as string);
    case DuckDBTypeId.DATE:
      return (v) => {
        const iso = isoOf((v as DuckDBDateValue).days * 86_400_000);
        return iso === undefined ? undefined : `"${iso.slice(0, 10)}"`;
      };
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_TZ:
      return (v) => {
        const micros = (v as DuckDBTimestampValue | DuckDBTimestampTZValue).micros;
        // Milliseconds rounded down, as strftime's %g cuts them (before 1970 too).
        const ms = micros >= 0n ? micros / 1000n : -((-micros + 999n) / 1000n);
        const iso = isoOf(Number(ms));
        return iso === undefined ? undefined : `"${iso.slice(0, 10)} ${iso.slice(11, 23)} UTC"`;
      };
    case DuckDBTypeId.BLOB:
      return (v) => `"0x${Buffer.from((v as DuckDBBlobValue).bytes).toString('hex')}"`;
    default:
      return undefined;
  }
}

/**
 * The rows of `chunks` as JSON object texts, keys in column order; undefined when a column's
 * type or a value is not rendered here.
 */
export function renderJsonRows(
  columns: readonly { name: string; type: DuckDBType }[],
  chunks: readonly DuckDBDataChunk[],
): string[] | undefined {
  const renderers: ValueJson[] = [];
  for (const column of columns) {
    const renderer = isRendered(column.type) ? valueJson(column.type) : undefined;
    if (!renderer) return undefined;
    renderers.push(renderer);
  }
  const keys = columns.map((column, i) => `${i === 0 ? '{' : ','}${jsonString(column.name)}:`);
  const rows: string[] = [];
  for (const chunk of chunks) {
    for (const values of chunk.getRows()) {
      let row = columns.length === 0 ? '{' : '';
      for (let i = 0; i < renderers.length; i++) {
        const value = values[i];
        const text = value === null || value === undefined ? 'null' : (renderers[i] as ValueJson)(value);
        if (text === undefined) return undefined;
        row += (keys[i] as string) + text;
      }
      rows.push(`${row}}`);
    }
  }
  return rows;
}

/** The columns as the snapshot records them: DESCRIBE's type names, in lower case. */
export function snapshotColumns(columns: readonly { name: string; type: DuckDBType }[]): SnapshotColumn[] {
  return columns.map((column) => ({ name: column.name, type: String(column.type).toLowerCase() }));
}
