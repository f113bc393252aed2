import type { Account } from '../../auth/account.js';
import type { Session } from '../../storage/database.js';
import { canSee } from '../../tables/table-access.js';
import { findTables, type TableRecord } from '../../tables/table-catalog.js';
import { didYouMean } from './name-suggestions.js';
import { SqlRefusal } from './refusals.js';
import {
  type NamedTable,
  nameKey,
  type QualifiedTable,
  shownName,
  type WrittenName,
  type WrittenTableName,
} from './table-names.js';

/**
 * What the table names of users' SQL mean (DESIGN §10). The checker lists the names; each
 * goes through the caller's resolver, here on the service's main thread, and the checker
 * rewrites it to the table it means (sql-check.ts).
 */

/** What a name means for this caller: the table to read, and whether it is private. */
export interface ReadableTable extends QualifiedTable {
  isPrivate: boolean;
}

/**
 * What each name means ([i] for `names[i]`): undefined = the caller may not read it (it does
 * not exist, or is another account's private table, or is the service's own). Every name of
 * one SQL text is asked at once. `suggest` names the nearest tables the caller may see, for
 * the refusal (name-suggestions.ts).
 */
export type TableResolver = ((
  names: readonly WrittenTableName[],
) => Promise<(ReadableTable | undefined)[]>) & {
  suggest?: (name: WrittenTableName) => Promise<string[]>;
};

/** The catalog Dune's names may start with (`dune.namespace.table`). */
const DUNE_CATALOG = 'dune';

/** The records of tables by name (`[i]` for `tables[i]`, undefined where none). */
export type FindTables = (
  tables: readonly { namespace: string; tableName: string }[],
) => Promise<(TableRecord | undefined)[]>;

/**
 * What a table name in `account`'s SQL means among the uploaded and created tables: an
 * unqualified name is in the account's own namespace; a qualified one is any namespace's
 * table the account may see (its own, other accounts' public ones, `restaking`; every table
 * for an admin), by the same rule as every other read path (`canSee`). Only tables recorded in
 * `_service.tables` exist here, so the service's own schemas (`_service`, `_results`) and
 * DuckDB's catalogs never resolve. The records are read on `session`, or by `find`.
 */
export function tableResolver(source: Session | FindTables, account: Account): TableResolver {
  const find: FindTables = typeof source === 'function' ? source : (tables) => findTables(source, tables);
  return async (names) => {
    const records = await find(
      names.map(({ schema, table }) => ({ namespace: schema ?? account.handle, tableName: table })),
    );
    return records.map((record) =>
      record && canSee(account, record)
        ? { schema: record.namespace, table: record.tableName, isPrivate: record.isPrivate }
        : undefined,
    );
  };
}

/**
 * What each of `tables` means (`[i]` for `tables[i]`), each distinct name asked once, in the
 * order the SQL names them; throws SqlRefusal for the first the caller may not read.
 */
export async function resolveTables(
  tables: readonly NamedTable[],
  resolve: TableResolver,
): Promise<ReadableTable[]> {
  // Each distinct name once, in one question: one after the other, a six-table join's names
  // took 6.6 ms of its execute call under load.
  const questions = new Map<string, WrittenTableName>();
  for (const table of tables) {
    const question = resolverQuestion(table.folded);
    // A name of another catalog is refused, whatever follows it: nothing after it is asked.
    if (question === undefined) break;
    const key = nameKey(question);
    if (!questions.has(key)) questions.set(key, question);
  }
  const answers = questions.size > 0 ? await resolve([...questions.values()]) : [];
  const found = new Map([...questions.keys()].map((key, i) => [key, answers[i]]));
  const readable = new Map<string, ReadableTable>();
  // A refusal names the first unknown table in the order the SQL names them.
  for (const table of tables) {
    const question = resolverQuestion(table.folded);
    const key = question && nameKey(question);
    const answer = key === undefined ? undefined : found.get(key);
    // Worded the same whatever the reason: absent, private, the service's own, another catalog.
    if (!answer || key === undefined) {
      // The nearest names the caller may see, never others (name-suggestions.ts).
      const near = question && resolve.suggest ? didYouMean(await resolve.suggest(question)) : '';
      throw new SqlRefusal(
        `table ${shownName(table.written)} does not exist${near}`,
        table.location,
        'byte',
        'unknown-table',
      );
    }
    readable.set(key, answer);
  }
  return tables.map(
    (table) => readable.get(nameKey(resolverQuestion(table.folded) as WrittenName)) as ReadableTable,
  );
}

/** What the resolver is asked about a name: `dune.` and no catalog ask the same; none for another catalog. */
function resolverQuestion(name: WrittenName): WrittenTableName | undefined {
  if (name.catalog !== undefined && name.catalog !== DUNE_CATALOG) return undefined;
  return name.schema === undefined ? { table: name.table } : { schema: name.schema, table: name.table };
}
