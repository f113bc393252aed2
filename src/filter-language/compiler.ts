/**
 * The only place that writes SQL. Values become `?` placeholders with their parameters in
 * order of appearance; names go through `quoteIdentifier`; type names in casts come from
 * `ColumnType`'s closed list. Everything else is constant text.
 */
import type { CheckedColumn, ComparisonOperator, Filter, Value } from './ast.js';
import type { ColumnType } from './column-types.js';
import { type ExactDomain, exactUnits, formatUnits, lowerComparison, lowerRange } from './exact-numbers.js';
import { quoteIdentifier } from './identifiers.js';

export type SqlParam = string | number | bigint | boolean | null;

/** A SQL fragment and the values of its `?` placeholders, in order of appearance. */
export interface CompiledSql {
  sql: string;
  params: SqlParam[];
}

/** Compiles a checked filter to a boolean SQL expression (without `WHERE`). */
export function compileFilter(filter: Filter): CompiledSql {
  const params: SqlParam[] = [];
  const sql = new FilterCompiler(params).compile(filter);
  return { sql, params };
}

type ExactColumnType = Extract<ColumnType, { kind: 'integer' | 'decimal' | 'bignum' }>;

function exactDomain(type: ExactColumnType): ExactDomain {
  switch (type.kind) {
    case 'integer':
      return { scale: 0, min: type.min, max: type.max };
    case 'decimal': {
      const limit = 10n ** BigInt(type.precision) - 1n;
      return { scale: type.scale, min: -limit, max: limit };
    }
    case 'bignum':
      return { scale: 0 };
  }
}

function isExact(type: ColumnType): type is ExactColumnType {
  return type.kind === 'integer' || type.kind === 'decimal' || type.kind === 'bignum';
}

function exactValue(value: Value): Extract<Value, { type: 'exact' }>['value'] {
  if (value.type !== 'exact') {
    throw new Error(`internal: ${value.type} value for an exact column`);
  }
  return value.value;
}

class FilterCompiler {
  constructor(private readonly params: SqlParam[]) {}

  compile(node: Filter): string {
    switch (node.kind) {
      case 'and':
      case 'or':
        return `(${node.operands.map((operand) => this.compile(operand)).join(node.kind === 'and' ? ' AND ' : ' OR ')})`;
      case 'not':
        return `(NOT ${this.compile(node.operand)})`;
      case 'is-null':
        return `${quoteIdentifier(node.column.name)} IS ${node.negated ? 'NOT ' : ''}NULL`;
      case 'compare':
        return this.compare(node.column, node.operator, node.value);
      case 'in':
        return this.in(node.column, node.negated, node.values);
      case 'like': {
        const operator = `${node.negated ? 'NOT ' : ''}${node.caseInsensitive ? 'ILIKE' : 'LIKE'}`;
        return `${this.columnSql(node.column)} ${operator} ${this.param(node.pattern)}`;
      }
      case 'between':
        return this.between(node.column, node.negated, node.low, node.high);
    }
  }

  private compare(column: CheckedColumn, operator: ComparisonOperator, value: Value): string {
    const type = column.type;
    if (isExact(type)) {
      const lowered = lowerComparison(operator, exactValue(value), exactDomain(type));
      if (lowered.kind === 'always') {
        return this.always(column, lowered.value);
      }
      return `${this.columnSql(column)} ${lowered.operator} ${this.exact(type, lowered.units)}`;
    }
    return `${this.columnSql(column)} ${operator} ${this.value(type, value)}`;
  }

  private in(column: CheckedColumn, negated: boolean, values: readonly Value[]): string {
    const type = column.type;
    let items: string[];
    if (isExact(type)) {
      // An item the column cannot hold (1.5 for an integer) matches no row: leave it out.
      const domain = exactDomain(type);
      items = [];
      for (const value of values) {
        const units = exactUnits(exactValue(value), domain);
        if (units !== undefined) {
          items.push(this.exact(type, units));
        }
      }
      if (items.length === 0) {
        return this.always(column, negated);
      }
    } else {
      items = values.map((value) => this.value(type, value));
    }
    return `${this.columnSql(column)} ${negated ? 'NOT IN' : 'IN'} (${items.join(', ')})`;
  }

  private between(column: CheckedColumn, negated: boolean, low: Value, high: Value): string {
    const type = column.type;
    const operator = negated ? 'NOT BETWEEN' : 'BETWEEN';
    if (isExact(type)) {
      const range = lowerRange(exactValue(low), exactValue(high), exactDomain(type));
      if (range === undefined) {
        return this.always(column, negated);
      }
      return `${this.columnSql(column)} ${operator} ${this.exact(type, range.low)} AND ${this.exact(type, range.high)}`;
    }
    return `${this.columnSql(column)} ${operator} ${this.value(type, low)} AND ${this.value(type, high)}`;
  }

  /**
   * A condition decided for every non-NULL value (`integer_column = 1.5`). It must still be
   * NULL for a NULL value, as the comparison would be, or `NOT (…)` would select NULL rows.
   */
  private always(column: CheckedColumn, value: boolean): string {
    return `(CASE WHEN ${quoteIdentifier(column.name)} IS NULL THEN NULL ELSE ${value ? 'TRUE' : 'FALSE'} END)`;
  }

  /** Column types without a comparison of their own are compared as text. */
  private columnSql(column: CheckedColumn): string {
    const quoted = quoteIdentifier(column.name);
    return column.type.kind === 'text' ? `CAST(${quoted} AS VARCHAR)` : quoted;
  }

  /** A bound in the column's own type, so DuckDB compares without widening either side. */
  private exact(type: ExactColumnType, units: bigint): string {
    switch (type.kind) {
      case 'integer':
        return `CAST(${this.param(integerParam(units))} AS ${type.sqlType})`;
      case 'bignum':
        return `CAST(${this.param(integerParam(units))} AS BIGNUM)`;
      case 'decimal':
        return `CAST(${this.param(formatUnits(units, type.scale))} AS DECIMAL(${type.precision},${type.scale}))`;
    }
  }

  private value(type: ColumnType, value: Value): string {
    switch (value.type) {
      case 'text':
        return this.param(value.value);
      case 'boolean':
        return this.param(value.value);
      case 'float':
        return `CAST(${this.param(doubleParam(value.value))} AS DOUBLE)`;
      case 'date':
        return `CAST(${this.param(value.value)} AS DATE)`;
      case 'timestamp': {
        const sqlType = type.kind === 'timestamp' ? type.sqlType : 'TIMESTAMP';
        // The text has no zone; a TIMESTAMPTZ must not read it in the session's zone.
        return `CAST(${this.param(sqlType === 'TIMESTAMPTZ' ? `${value.value}+00` : value.value)} AS ${sqlType})`;
      }
      case 'bytes':
        return `from_hex(${this.param(value.hex)})`;
      case 'exact':
        throw new Error('internal: exact values are compiled by exact()');
    }
  }

  private param(value: SqlParam): string {
    this.params.push(value);
    return '?';
  }
}

/** Small integers bind as numbers; larger ones as decimal text, which the CAST reads exactly. */
function integerParam(units: bigint): number | string {
  const asNumber = Number(units);
  return Number.isSafeInteger(asNumber) ? asNumber : units.toString();
}

/**
 * The node binding binds an integral JS number as an integer type and fails beyond int64,
 * so large and non-finite doubles travel as text (`1e+300`, `Infinity`, `NaN`).
 */
function doubleParam(value: number): number | string {
  return Number.isFinite(value) && (Number.isSafeInteger(value) || !Number.isInteger(value))
    ? value
    : String(value);
}
