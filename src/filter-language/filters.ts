import type { Filter } from './ast.js';
import { checkFilter } from './checker.js';
import { type CompiledSql, compileFilter } from './compiler.js';
import { SourceText } from './errors.js';
import { parseFilterSyntax } from './filter-parser.js';
import type { ResultColumn } from './identifiers.js';
import { readNamesTwice } from './lexer.js';

/** Parses and checks `filters` against the result's columns: the typed tree, before SQL. */
export function parseFilters(text: string, columns: readonly ResultColumn[]): Filter {
  const source = new SourceText('filters', text);
  return readNamesTwice(source, (eager) => checkFilter(source, parseFilterSyntax(source, eager), columns));
}

/** `filters` as a SQL boolean expression (no `WHERE`) whose values are all `?` parameters. */
export function compileFilters(text: string, columns: readonly ResultColumn[]): CompiledSql {
  return compileFilter(parseFilters(text, columns));
}
