/**
 * Table names in users' SQL, on either side of the checker's worker: as written, as DuckDB
 * compares them, as messages show them, and the stored table a name is rewritten to.
 */

/** A table name as written, `catalog` only when given (`dune.alice.t`). */
export interface WrittenName {
  catalog?: string;
  schema?: string;
  table: string;
}

/**
 * A table name as the resolver is asked about it: `dune.` as catalog removed; schema
 * undefined when unqualified. ASCII letters are lowercased, as DuckDB compares names
 * (`"ALICE".X` is `alice.x`).
 */
export interface WrittenTableName {
  schema?: string;
  table: string;
}

/** A table the SQL names (not one of its CTEs), as the service's resolver is asked about it. */
export interface NamedTable {
  /** As written, for messages. */
  written: WrittenName;
  /** ASCII letters lowercased, as DuckDB compares names. */
  folded: WrittenName;
  location: number | undefined;
}

/**
 * A table of the service's database, named in full: what a resolved name is rewritten to.
 * Plain names, never SQL text: DuckDB's SQL writer quotes them.
 */
export interface QualifiedTable {
  schema: string;
  table: string;
}

/**
 * DuckDB compares identifiers ignoring case. Only ASCII letters are folded: every namespace
 * and table name is ASCII here, so a name with other letters matches nothing either way,
 * while Unicode folding would make the Kelvin sign `K` read as a `k`.
 */
export const foldName = (name: string): string => name.replace(/[A-Z]+/g, (s) => s.toLowerCase());

export const nameKey = (name: WrittenName): string =>
  JSON.stringify([name.catalog ?? '', name.schema ?? '', name.table]);

/** A name as written, for messages: plain parts bare, others double-quoted. */
export function shownName(name: WrittenName): string {
  return [name.catalog, name.schema, name.table]
    .filter((part): part is string => part !== undefined)
    .map((part) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(part) ? part : `"${part.replaceAll('"', '""')}"`))
    .join('.');
}
