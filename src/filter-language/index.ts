/**
 * The query language of the results endpoints: `filters` (DESIGN.md §7), `sort_by` and
 * `columns` (§5), turned into SQL fragments whose values are all bound parameters. Imports
 * neither express nor DuckDB.
 */
export type { CheckedColumn, ComparisonOperator, Filter, Value } from './ast.js';
export { resolveColumns } from './column-list.js';
export type { ColumnType } from './column-types.js';
export { classifyType } from './column-types.js';
export type { CompiledSql, SqlParam } from './compiler.js';
export { compileFilter } from './compiler.js';
export type { QueryParameter } from './errors.js';
export { QueryLanguageError } from './errors.js';
export type { ExactNumber } from './exact-numbers.js';
export { compileFilters, parseFilters } from './filters.js';
export type { ResultColumn } from './identifiers.js';
export { MAX_LIST_ITEMS, MAX_NESTING_DEPTH, MAX_TEXT_BYTES } from './limits.js';
export { quoteIdentifier } from './quote-identifier.js';
export type { SortKey } from './sort-by.js';
export { compileSortBy, parseSortBy } from './sort-by.js';
