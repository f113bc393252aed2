/**
 * Resolves every name of a filter against the result's columns and converts every literal for
 * its column's type, producing the closed `Filter` tree the compiler works from. Whatever is
 * wrong with a value is found here, with its position, so the compiler cannot fail.
 */
import type { CheckedColumn, Filter, FilterSyntax, LiteralSyntax, NameRef, Value } from './ast.js';
import { classifyType } from './column-types.js';
import { echo, type SourceText } from './errors.js';
import { parseExactNumber } from './exact-numbers.js';
import { displayName, type ResultColumn, resolveColumn } from './identifiers.js';
import { MAX_NUMBER_DIGITS } from './limits.js';
import {
  isNumberText,
  parseBoolean,
  parseDate,
  parseDouble,
  parseHexBytes,
  parseTimestamp,
} from './literals.js';

export function checkFilter(
  source: SourceText,
  syntax: FilterSyntax,
  columns: readonly ResultColumn[],
): Filter {
  return new Checker(source, columns).check(syntax);
}

class Checker {
  constructor(
    private readonly source: SourceText,
    private readonly columns: readonly ResultColumn[],
  ) {}

  check(node: FilterSyntax): Filter {
    switch (node.kind) {
      case 'and':
      case 'or':
        return { kind: node.kind, operands: node.operands.map((operand) => this.check(operand)) };
      case 'not':
        return { kind: 'not', operand: this.check(node.operand) };
      case 'compare':
        return this.compare(node);
      case 'in': {
        const column = this.column(node.column);
        const values = node.values.map((value) => this.value(column, value, node.operatorText));
        return { kind: 'in', column, negated: node.negated, values };
      }
      case 'like':
        return this.like(node);
      case 'between': {
        const column = this.column(node.column);
        return {
          kind: 'between',
          column,
          negated: node.negated,
          low: this.value(column, node.low, node.operatorText),
          high: this.value(column, node.high, node.operatorText),
        };
      }
      case 'is-null':
        return { kind: 'is-null', column: this.column(node.column), negated: node.negated };
    }
  }

  private compare(node: Extract<FilterSyntax, { kind: 'compare' }>): Filter {
    const column = this.column(node.column);
    if (node.value.kind === 'null') {
      const instead =
        node.operator === '=' ? 'IS NULL' : node.operator === '<>' ? 'IS NOT NULL' : 'IS NULL or IS NOT NULL';
      throw this.source.error(
        node.value.start,
        `NULL cannot be compared with '${node.operatorText}'`,
        `write ${displayName(column.name)} ${instead}`,
      );
    }
    return {
      kind: 'compare',
      column,
      operator: node.operator,
      value: this.value(column, node.value, node.operatorText),
    };
  }

  private like(node: Extract<FilterSyntax, { kind: 'like' }>): Filter {
    const column = this.column(node.column);
    if (column.type.kind !== 'varchar' && column.type.kind !== 'text') {
      throw this.source.error(
        node.column.start,
        `${node.operatorText} needs a text column; ${displayName(column.name)} is ${column.typeName}`,
      );
    }
    if (node.pattern.kind !== 'string') {
      throw this.source.error(
        node.pattern.start,
        `expected a quoted pattern after ${node.operatorText}, found ${this.found(node.pattern)}`,
        "for example 'eigen%' (% matches any text, _ one character)",
      );
    }
    const nul = node.pattern.value.indexOf('\u0000');
    if (nul !== -1) {
      // DuckDB's ILIKE reads NUL as an escape character (LIKE does not): refuse it in both.
      throw this.source.error(
        node.pattern.start + 1 + nul,
        `${node.operatorText} patterns cannot contain the NUL character (U+0000)`,
      );
    }
    return {
      kind: 'like',
      column,
      negated: node.negated,
      caseInsensitive: node.caseInsensitive,
      pattern: node.pattern.value,
    };
  }

  private column(ref: NameRef): CheckedColumn {
    const column = resolveColumn(this.source, this.columns, ref.name, ref.start);
    return { name: column.name, typeName: column.type, type: classifyType(column.type) };
  }

  /** `literal` converted for `column`'s type; NULL, or a value of another kind, is refused here. */
  private value(column: CheckedColumn, literal: LiteralSyntax, operatorText: string): Value {
    if (literal.kind === 'null') {
      const where = operatorText.endsWith('IN') ? 'in an IN list' : `with ${operatorText}`;
      throw this.source.error(
        literal.start,
        `NULL cannot be used ${where}`,
        `test for it with ${displayName(column.name)} IS NULL`,
      );
    }
    const type = column.type;
    switch (type.kind) {
      case 'integer':
      case 'decimal':
      case 'bignum':
        return this.exact(column, literal);
      case 'float':
        return this.float(column, literal);
      case 'varchar':
      case 'text':
        return this.text(column, literal);
      case 'boolean':
        return this.boolean(column, literal);
      case 'date':
        return this.date(column, literal);
      case 'timestamp':
        return this.timestamp(column, literal, type.fractionDigits);
      case 'blob':
        return this.bytes(column, literal);
    }
  }

  private exact(column: CheckedColumn, literal: LiteralSyntax): Value {
    const text =
      literal.kind === 'number' ? literal.text : literal.kind === 'string' ? literal.value.trim() : '';
    const parsed = isNumberText(text) ? parseExactNumber(text) : undefined;
    if (parsed === 'out-of-range') {
      throw this.source.error(literal.start, `number with more than ${MAX_NUMBER_DIGITS} digits`);
    }
    if (parsed === undefined) throw this.mismatch(column, literal, 'a number');
    return { type: 'exact', value: parsed };
  }

  private float(column: CheckedColumn, literal: LiteralSyntax): Value {
    const parsed =
      literal.kind === 'number'
        ? Number(literal.text)
        : literal.kind === 'string'
          ? parseDouble(literal.value)
          : undefined;
    if (parsed === undefined) throw this.mismatch(column, literal, 'a number');
    return { type: 'float', value: parsed };
  }

  private text(column: CheckedColumn, literal: LiteralSyntax): Value {
    switch (literal.kind) {
      case 'string':
        return { type: 'text', value: literal.value };
      case 'number':
        return { type: 'text', value: literal.text };
      case 'hex':
        // Addresses are stored as lowercase 0x text; a hex literal means those bytes.
        return { type: 'text', value: `0x${literal.digits.toLowerCase()}` };
      default:
        throw this.mismatch(column, literal, 'a quoted string', `quote it: '${this.raw(literal)}'`);
    }
  }

  private boolean(column: CheckedColumn, literal: LiteralSyntax): Value {
    const parsed =
      literal.kind === 'boolean'
        ? literal.value
        : literal.kind === 'string'
          ? parseBoolean(literal.value)
          : undefined;
    if (parsed === undefined) throw this.mismatch(column, literal, 'TRUE or FALSE');
    return { type: 'boolean', value: parsed };
  }

  private date(column: CheckedColumn, literal: LiteralSyntax): Value {
    const parsed = literal.kind === 'string' ? parseDate(literal.value) : undefined;
    if (parsed === undefined) throw this.mismatch(column, literal, "a date such as '2024-01-31'");
    return { type: 'date', value: parsed };
  }

  private timestamp(column: CheckedColumn, literal: LiteralSyntax, fractionDigits: 6 | 9): Value {
    const parsed = literal.kind === 'string' ? parseTimestamp(literal.value, fractionDigits) : undefined;
    if (parsed === 'fraction') {
      throw this.mismatch(column, literal, `a timestamp with at most ${fractionDigits} fractional digits`);
    }
    if (parsed === undefined) {
      throw this.mismatch(column, literal, "a timestamp such as '2024-01-31 12:00:00'");
    }
    return { type: 'timestamp', value: parsed };
  }

  private bytes(column: CheckedColumn, literal: LiteralSyntax): Value {
    const hex =
      literal.kind === 'hex'
        ? parseHexBytes(`0x${literal.digits}`)
        : literal.kind === 'string'
          ? parseHexBytes(literal.value)
          : undefined;
    if (hex === undefined) {
      throw this.mismatch(column, literal, 'bytes as 0x followed by an even number of hex digits');
    }
    return { type: 'bytes', hex };
  }

  private mismatch(column: CheckedColumn, literal: LiteralSyntax, expected: string, hint?: string): Error {
    return this.source.error(
      literal.start,
      `expected ${expected} for column ${displayName(column.name)} (${column.typeName}), found ${this.found(literal)}`,
      hint,
    );
  }

  private raw(literal: LiteralSyntax): string {
    return this.source.text.slice(literal.start, literal.end);
  }

  private found(literal: LiteralSyntax): string {
    return echo(this.raw(literal), '');
  }
}
