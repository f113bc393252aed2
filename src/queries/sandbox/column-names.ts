import type { Session } from '../../storage/database.js';
import { holdsRewrittenConstant } from './constant-types.js';
import { isTreeObject, type TreeObject, type TreeValue, writeTree } from './parse-tree.js';
import { SqlRefusal } from './refusals.js';

/**
 * Keeps the result's column names those of the SQL as the user wrote it, where the rewrite
 * would change them.
 *
 * DuckDB names a column without an alias after the text of its expression (`sum(n)`,
 * `(n + 1)`). The rewrite changes that text where the expression holds a subquery, whose
 * table names are rewritten (`(SELECT max(v) FROM x)` would become
 * `(SELECT max(v) FROM cte_1 AS x)`), or a DOUBLE or DECIMAL constant, which becomes a cast
 * (constant-types.ts). Such a select-list item gets as its alias the text DuckDB writes for
 * it as it was parsed, before the rewrite: the name it had.
 *
 * Other items keep no alias: their text does not depend on the rewrite, and DuckDB parses
 * the SQL it writes back to the same names, except where its writer is not faithful
 * (measured on 1.5.6: `lambda x: x > 1` comes back as `x -> (x > 1)`, `INTERVAL 1 DAY`'s
 * `CAST(1 AS DOUBLE)` as `CAST(1 AS "DOUBLE")`), which the same treatment could not fix: the
 * text written for a parsed item differs from its name in those same places. An item holding
 * a star (`max(COLUMNS(*))`, `concat(*COLUMNS(*))`) is named by the binder after each column
 * it expands to, so it is left alone, as are positional references (`#1`). Every SELECT of
 * the tree is looked at, since `SELECT *` passes names on from subqueries and CTEs.
 */

export interface UnnamedItem {
  /** The select-list item, which the rewrite may change but never replaces. */
  item: TreeObject;
  /** A one-item SELECT of the item as parsed, for DuckDB to write as SQL. */
  tree: string;
}

/**
 * Whether `value` holds a node of one of these expression classes, at any depth; with
 * `inSubqueries` false, not looking inside subqueries (whose stars name no column outside).
 */
function holds(value: TreeValue, classes: ReadonlySet<string>, inSubqueries = true): boolean {
  if (Array.isArray(value)) return value.some((item) => holds(item, classes, inSubqueries));
  if (!isTreeObject(value)) return false;
  if (typeof value.class === 'string' && classes.has(value.class)) return true;
  if (!inSubqueries && value.class === 'SUBQUERY') return false;
  for (const key in value) if (holds(value[key] as TreeValue, classes, inSubqueries)) return true;
  return false;
}

const SUBQUERY = new Set(['SUBQUERY']);
/** At least what `alone` adds around an item (about 400 characters on DuckDB 1.5.6). */
const ALONE_OVERHEAD_CHARS = 1_024;
const NAMED_BY_BINDER = new Set(['STAR', 'POSITIONAL_REFERENCE']);

/**
 * The items to name, each with its text as parsed. Call before the tree is rewritten.
 *
 * The texts of items nested in one another overlap (`SELECT (SELECT (SELECT …))`: each
 * level's text holds every level below it), so their sum can grow with the square of the SQL's
 * length: 13 KB of SQL nested 150 deep once made 2.4 MB of aliases, 8 s and 1.3 GB. Past
 * `maxChars` of item trees in all the query is refused, asking for aliases.
 */
export function unnamedItems(root: TreeValue, maxChars: number): UnnamedItem[] {
  const found: UnnamedItem[] = [];
  let chars = 0;
  const visit = (value: TreeValue): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isTreeObject(value)) return;
    if (value.type === 'SELECT_NODE' && Array.isArray(value.select_list)) {
      for (const item of value.select_list) {
        if (!isTreeObject(item) || item.alias !== '') continue;
        if (!(holds(item, SUBQUERY) || holdsRewrittenConstant(item)) || holds(item, NAMED_BY_BINDER, false))
          continue;
        const tree = writeTree(alone(value, item));
        // Each one-item SELECT also carries a few hundred characters of its own.
        chars += Math.max(0, tree.length - ALONE_OVERHEAD_CHARS);
        if (chars > maxChars) {
          throw new SqlRefusal(
            'the columns of this query without an alias hold too much SQL in nested subqueries for the sandbox to keep their names: give them aliases (… AS name)',
            undefined,
          );
        }
        found.push({ item, tree });
      }
    }
    for (const key in value) visit(value[key] as TreeValue);
  };
  visit(root);
  return found;
}

/**
 * `SELECT item`, from the SELECT it belongs to (so that every field DuckDB's reader requires
 * is there) with everything but the item emptied.
 */
function alone(select: TreeObject, item: TreeObject): TreeValue {
  const from = isTreeObject(select.from_table) ? select.from_table : {};
  const node: TreeObject = {
    ...select,
    modifiers: [],
    cte_map: { map: [] },
    select_list: [item],
    from_table: { type: 'EMPTY', alias: '', sample: null, query_location: from.query_location ?? null },
    where_clause: null,
    group_expressions: [],
    group_sets: [],
    aggregate_handling: 'STANDARD_HANDLING',
    having: null,
    sample: null,
    qualify: null,
  };
  return { error: false, statements: [{ node, named_param_map: [] }] };
}

/** Gives each item the name DuckDB gives its text, in one round trip. */
export async function nameItems(session: Session, items: readonly UnnamedItem[]): Promise<void> {
  if (items.length === 0) return;
  const rows = await session.all<{ key: string; sql: string }>(
    'SELECT key, json_deserialize_sql(value) AS sql FROM json_each(?::JSON)',
    [`[${items.map((entry) => entry.tree).join(',')}]`],
  );
  for (const { key, sql } of rows) {
    const entry = items[Number(key)];
    if (!entry || !sql.startsWith('SELECT '))
      throw new Error(`DuckDB wrote ${JSON.stringify(sql)} for an item`);
    entry.item.alias = sql.slice('SELECT '.length);
  }
}
