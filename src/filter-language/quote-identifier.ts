/**
 * The one function in the code base that writes an identifier into SQL. It is a leaf that
 * imports nothing: the filter language may import nothing of ours, and every layer may import
 * it (storage re-exports it as its own quoter). Doubling `"` makes any name safe; a NUL cannot
 * be made safe (DuckDB's parser stops at it), and names are checked before they get here, so a
 * NUL is the caller's bug and thrown as such.
 */
export function quoteIdentifier(name: string): string {
  if (name.includes('\u0000')) {
    throw new Error('identifier contains a NUL character');
  }
  return `"${name.replaceAll('"', '""')}"`;
}
