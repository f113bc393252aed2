/**
 * The one place that writes user-influenced names and text into SQL. Values are bound
 * as parameters everywhere else; these exist for identifiers and for the few options
 * DuckDB accepts only as literals (such as read_csv's column map).
 */
import { quoteIdentifier } from '../filter-language/quote-identifier.js';

/**
 * A double-quoted identifier. The one quoter is the filter language's, a leaf module: the
 * filter language may import nothing of ours, so the quoter cannot live here, while storage
 * may import a leaf like any layer. One function, one NUL rule.
 */
export { quoteIdentifier };

/** `schema.table`, both parts quoted. */
export function qualifiedName(schema: string, table: string): string {
  return `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
}

/** A single-quoted string literal, with quotes doubled; DuckDB treats backslashes literally. */
export function quoteLiteral(text: string): string {
  if (text.includes('\u0000')) throw new Error('literal contains a NUL character');
  return `'${text.replaceAll("'", "''")}'`;
}
