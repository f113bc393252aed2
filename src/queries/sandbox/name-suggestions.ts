import { nearestNames } from '../../filter-language/nearest-names.js';
import type { WrittenTableName } from './table-names.js';

/**
 * "Did you mean" for a table name in users' SQL that the caller may not read (issue 24). A pure
 * function over the tables the caller may see, so the answer for a name is the same whether a
 * table of that name does not exist or is another account's private one: it never names, nor
 * depends on, a table the caller may not see.
 */

export interface VisibleTable {
  namespace: string;
  table: string;
}

/** How the caller would write a table: bare in `home` (where unqualified names point), else qualified. */
const written = (table: VisibleTable, home: string, bare: boolean) =>
  bare && table.namespace === home ? table.table : `${table.namespace}.${table.table}`;

/**
 * The nearest tables to `name` among `visible`, as the caller would write them: for a bare
 * name, tables of `home` first (`trades` → `dataset_trades`), then others' (`avs` →
 * `restaking.avs`); for a qualified one, the nearest qualified names (`alice.trade` →
 * `alice.dataset_trades`).
 */
export function suggestTables(
  name: WrittenTableName,
  visible: readonly VisibleTable[],
  home: string,
): string[] {
  const bare = name.schema === undefined;
  if (!bare) {
    const asked = `${name.schema}.${name.table}`;
    const inSchema = visible.filter((t) => t.namespace === name.schema);
    const near = nearestNames(
      name.table,
      inSchema.map((t) => t.table),
    ).map((table) => `${name.schema}.${table}`);
    return near.length > 0
      ? near
      : nearestNames(
          asked,
          visible.map((t) => written(t, home, false)),
        );
  }
  const own = nearestNames(
    name.table,
    visible.filter((t) => t.namespace === home).map((t) => t.table),
  );
  const others = nearestNames(
    name.table,
    visible.filter((t) => t.namespace !== home).map((t) => t.table),
  );
  const elsewhere = visible
    .filter((t) => t.namespace !== home && others.includes(t.table))
    .map((t) => written(t, home, true));
  return [...own, ...elsewhere].slice(0, 3);
}

/** The words a refusal ends with: ` (did you mean dataset_trades?)`, or nothing. */
export function didYouMean(names: readonly string[]): string {
  return names.length > 0 ? ` (did you mean ${names.join(' or ')}?)` : '';
}
