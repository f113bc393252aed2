/**
 * The two closed trees of the filter language. jsep's loose output is turned into
 * `FilterSyntax` (what the client wrote, names unresolved, literals as written); the checker
 * turns that into `Filter` (columns resolved, values typed for their column), which is all the
 * compiler ever sees.
 */
import type { ColumnType } from './column-types.js';
import type { ExactNumber } from './exact-numbers.js';

export type ComparisonOperator = '=' | '<>' | '<' | '<=' | '>' | '>=';

/** Positions in the syntax tree are UTF-16 indices into the client's original text. */
export interface NameRef {
  name: string;
  start: number;
  end: number;
}

export type LiteralSyntax = { start: number; end: number } & (
  | { kind: 'string'; value: string }
  | { kind: 'number'; text: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' }
  | { kind: 'hex'; digits: string }
);

/** `operatorText` is the operator as the client spelled it, for messages (`!=`, `NOT ILIKE`). */
export type FilterSyntax =
  | { kind: 'and' | 'or'; operands: FilterSyntax[] }
  | { kind: 'not'; operand: FilterSyntax }
  | {
      kind: 'compare';
      operator: ComparisonOperator;
      operatorText: string;
      column: NameRef;
      value: LiteralSyntax;
    }
  | {
      kind: 'in';
      negated: boolean;
      operatorText: string;
      column: NameRef;
      values: LiteralSyntax[];
    }
  | {
      kind: 'like';
      negated: boolean;
      caseInsensitive: boolean;
      operatorText: string;
      column: NameRef;
      pattern: LiteralSyntax;
    }
  | {
      kind: 'between';
      negated: boolean;
      operatorText: string;
      column: NameRef;
      low: LiteralSyntax;
      high: LiteralSyntax;
    }
  | { kind: 'is-null'; negated: boolean; column: NameRef };

/** A resolved column: its name as stored, its DuckDB type name, and what kind of values it holds. */
export interface CheckedColumn {
  name: string;
  typeName: string;
  type: ColumnType;
}

/**
 * A literal converted for its column. Dates and timestamps are normalised text
 * (`YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS.ffffff`, UTC); bytes are lowercase hex digits.
 */
export type Value =
  | { type: 'text'; value: string }
  | { type: 'exact'; value: ExactNumber }
  | { type: 'float'; value: number }
  | { type: 'boolean'; value: boolean }
  | { type: 'date'; value: string }
  | { type: 'timestamp'; value: string }
  | { type: 'bytes'; hex: string };

export type Filter =
  | { kind: 'and' | 'or'; operands: Filter[] }
  | { kind: 'not'; operand: Filter }
  | { kind: 'compare'; column: CheckedColumn; operator: ComparisonOperator; value: Value }
  | { kind: 'in'; column: CheckedColumn; negated: boolean; values: Value[] }
  | { kind: 'like'; column: CheckedColumn; negated: boolean; caseInsensitive: boolean; pattern: string }
  | { kind: 'between'; column: CheckedColumn; negated: boolean; low: Value; high: Value }
  | { kind: 'is-null'; column: CheckedColumn; negated: boolean };
