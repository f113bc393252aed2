/**
 * The one place that writes user-influenced names and text into SQL. Values are bound
 * as parameters everywhere else; these two exist for identifiers and for the few
 * options DuckDB accepts only as literals (such as read_csv's column map).
 */

/** A double-quoted identifier, with quotes doubled (DuckDB and standard SQL). */
export function quoteIdentifier(name: string): string {
  if (name.includes('\u0000')) throw new Error('identifier contains a NUL character');
  return `"${name.replaceAll('"', '""')}"`;
}

/** `schema.table`, both parts quoted. */
export function qualifiedName(schema: string, table: string): string {
  return `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
}

/** A single-quoted string literal, with quotes doubled; DuckDB treats backslashes literally. */
export function quoteLiteral(text: string): string {
  if (text.includes('\u0000')) throw new Error('literal contains a NUL character');
  return `'${text.replaceAll("'", "''")}'`;
}
