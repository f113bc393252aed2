/**
 * An independent evaluation of a filter in JavaScript, with SQL's three-valued logic and the
 * comparison semantics the language promises: exact arithmetic for integer, decimal and bignum
 * columns, IEEE doubles ordered as DuckDB orders them (NaN above everything, equal to itself),
 * text and bytes by their bytes. It knows nothing of SQL or of the compiler.
 */
import type { Filter, Value } from '../../../src/filter-language/index.js';
import { type CellValue, columnNamed, type FixtureColumn, type FixtureRow } from './fixture.js';

export type Truth = boolean | null;

/** `num / den`, `den > 0`. */
export interface Rational {
  num: bigint;
  den: bigint;
}

export type EvalValue =
  | { kind: 'exact'; value: Rational }
  | { kind: 'double'; value: number }
  | { kind: 'text'; value: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'date'; value: string }
  | { kind: 'timestamp'; value: string }
  | { kind: 'bytes'; value: string };

export type EvalOperator = '=' | '<>' | '<' | '<=' | '>' | '>=';

export type EvalFilter =
  | { kind: 'and' | 'or'; operands: EvalFilter[] }
  | { kind: 'not'; operand: EvalFilter }
  | { kind: 'compare'; column: string; operator: EvalOperator; value: EvalValue }
  | { kind: 'in'; column: string; negated: boolean; values: EvalValue[] }
  | { kind: 'like'; column: string; negated: boolean; caseInsensitive: boolean; pattern: string }
  | { kind: 'between'; column: string; negated: boolean; low: EvalValue; high: EvalValue }
  | { kind: 'is-null'; column: string; negated: boolean };

const not = (t: Truth): Truth => (t === null ? null : !t);

function and(values: Truth[]): Truth {
  if (values.includes(false)) {
    return false;
  }
  return values.includes(null) ? null : true;
}

function or(values: Truth[]): Truth {
  if (values.includes(true)) {
    return true;
  }
  return values.includes(null) ? null : false;
}

/** `columns` says how each column compares; the fixture's columns unless given. */
export function evaluate(
  filter: EvalFilter,
  row: FixtureRow,
  columns: (name: string) => FixtureColumn = columnNamed,
): Truth {
  switch (filter.kind) {
    case 'and':
      return and(filter.operands.map((operand) => evaluate(operand, row, columns)));
    case 'or':
      return or(filter.operands.map((operand) => evaluate(operand, row, columns)));
    case 'not':
      return not(evaluate(filter.operand, row, columns));
    case 'is-null': {
      const isNull = row[filter.column] === null;
      return filter.negated ? !isNull : isNull;
    }
    case 'compare':
      return compareCell(columns(filter.column), row, filter.operator, filter.value);
    case 'in': {
      const found = or(filter.values.map((value) => compareCell(columns(filter.column), row, '=', value)));
      return filter.negated ? not(found) : found;
    }
    case 'between': {
      const inside = and([
        compareCell(columns(filter.column), row, '>=', filter.low),
        compareCell(columns(filter.column), row, '<=', filter.high),
      ]);
      return filter.negated ? not(inside) : inside;
    }
    case 'like': {
      const cell = row[filter.column];
      if (cell === null || cell === undefined) {
        return null;
      }
      const matched = likeMatches(String(cell), filter.pattern, filter.caseInsensitive);
      return filter.negated ? !matched : matched;
    }
  }
}

function compareCell(
  column: FixtureColumn,
  row: FixtureRow,
  operator: EvalOperator,
  value: EvalValue,
): Truth {
  const cell = row[column.name];
  if (cell === null || cell === undefined) {
    return null;
  }
  const order = compare(column, cell, value);
  switch (operator) {
    case '=':
      return order === 0;
    case '<>':
      return order !== 0;
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
  }
}

function compare(column: FixtureColumn, cell: CellValue, value: EvalValue): number {
  if (column.kind !== value.kind) {
    throw new Error(`test bug: ${value.kind} value for ${column.kind} column ${column.name}`);
  }
  switch (value.kind) {
    case 'exact':
      return compareRational({ num: cell as bigint, den: 10n ** BigInt(column.scale ?? 0) }, value.value);
    case 'double':
      return compareDouble(cell as number, value.value);
    case 'text':
      return Buffer.compare(Buffer.from(cell as string, 'utf8'), Buffer.from(value.value, 'utf8'));
    case 'boolean':
      return Number(cell) - Number(value.value);
    default:
      return (cell as string) < value.value ? -1 : (cell as string) > value.value ? 1 : 0;
  }
}

export function compareRational(a: Rational, b: Rational): number {
  const difference = a.num * b.den - b.num * a.den;
  return difference < 0n ? -1 : difference > 0n ? 1 : 0;
}

/** DuckDB's order of doubles: NaN equals NaN and sorts above +Infinity; -0 equals 0. */
export function compareDouble(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) {
    return Number.isNaN(a) && Number.isNaN(b) ? 0 : Number.isNaN(a) ? 1 : -1;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** SQL LIKE without an escape character: `%` any text, `_` one character (code point). */
export function likeMatches(text: string, pattern: string, caseInsensitive: boolean): boolean {
  const subject = caseInsensitive ? text.toLowerCase() : text;
  const source = caseInsensitive ? pattern.toLowerCase() : pattern;
  let regex = '^';
  for (const c of source) {
    regex += c === '%' ? '[\\s\\S]*' : c === '_' ? '[\\s\\S]' : c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`${regex}$`, 'u').test(subject);
}

/** The checked tree of the code under test, in the evaluator's terms. */
export function fromChecked(filter: Filter): EvalFilter {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return { kind: filter.kind, operands: filter.operands.map(fromChecked) };
    case 'not':
      return { kind: 'not', operand: fromChecked(filter.operand) };
    case 'compare':
      return {
        kind: 'compare',
        column: filter.column.name,
        operator: filter.operator,
        value: fromValue(filter.value),
      };
    case 'in':
      return {
        kind: 'in',
        column: filter.column.name,
        negated: filter.negated,
        values: filter.values.map(fromValue),
      };
    case 'like':
      return {
        kind: 'like',
        column: filter.column.name,
        negated: filter.negated,
        caseInsensitive: filter.caseInsensitive,
        pattern: filter.pattern,
      };
    case 'between':
      return {
        kind: 'between',
        column: filter.column.name,
        negated: filter.negated,
        low: fromValue(filter.low),
        high: fromValue(filter.high),
      };
    case 'is-null':
      return { kind: 'is-null', column: filter.column.name, negated: filter.negated };
  }
}

function fromValue(value: Value): EvalValue {
  switch (value.type) {
    case 'exact':
      return { kind: 'exact', value: { num: value.value.units, den: 10n ** BigInt(value.value.scale) } };
    case 'float':
      return { kind: 'double', value: value.value };
    case 'text':
      return { kind: 'text', value: value.value };
    case 'boolean':
      return { kind: 'boolean', value: value.value };
    case 'date':
      return { kind: 'date', value: value.value };
    case 'timestamp':
      return { kind: 'timestamp', value: value.value };
    case 'bytes':
      return { kind: 'bytes', value: value.hex };
  }
}
