import type { SqlChecker } from './checker-pool.js';
import { refusedIn, SqlRefusal, SqlRefused } from './refusals.js';
import { resolveTables, type TableResolver } from './table-resolver.js';
import type { CheckOptions } from './tree-checker.js';

/**
 * The sandbox around users' SQL (DESIGN §10), and its front door. DuckDB's own parser decides
 * what the SQL is (`json_serialize_sql`); the checker walks the whole tree (tree-checker.ts,
 * by the shapes of tree-shapes.ts and the functions of allowed-functions.ts), refuses what a
 * query may not contain and lists the tables it names; each name goes through the caller's
 * resolver (table-resolver.ts) and is rewritten to the table it means; numbers keep their
 * types (constant-types.ts) and select-list items the column names DuckDB would have given
 * them (column-names.ts); `json_deserialize_sql` writes the checked tree back as SQL. That SQL
 * is then parsed again and checked once more, so what runs is what was checked even if
 * DuckDB's SQL writer and parser disagreed somewhere (sql-check.ts). No regular expression
 * ever looks at the SQL text. The database's own settings are the second wall (Database.open).
 *
 * Everything but the resolver runs on a worker thread of the checker (checker-pool.ts,
 * check-worker.ts), on a DuckDB of its own: its cost, linear in the SQL's length
 * (parse-cost.ts bounds the shapes DuckDB parses in more), never stalls the event loop, and it
 * borrows none of the service's connections. Only the resolver runs here.
 */

export interface SandboxedSql {
  sql: string;
  readsPrivate: boolean;
}

/**
 * Bounds the cost of one check, with the shapes DuckDB parses in more than linear work refused
 * before parsing (parse-cost.ts): the tree is 15–200 times the SQL's size, and a check of this
 * much SQL takes 0.1–1.5 s of a worker thread (docs/library-notes.md). Longer SQL is refused
 * before anything else.
 */
export const MAX_SQL_BYTES = 64 * 1024;

/**
 * Checks one user's SQL with DuckDB's own parser and returns it rewritten to read only
 * resolved tables; throws SqlRefused (an ApiError 400, src/errors.ts) when refused, 503 when
 * the checker is too busy to check it now.
 */
export async function sandboxSql(
  checker: SqlChecker,
  sql: string,
  resolve: TableResolver,
  options: CheckOptions = {},
): Promise<SandboxedSql> {
  const bytes = Buffer.byteLength(sql, 'utf8');
  if (bytes > MAX_SQL_BYTES) {
    throw new SqlRefused(
      `the SQL is ${bytes} bytes long; at most ${MAX_SQL_BYTES} bytes are accepted`,
      'too-long',
      undefined,
    );
  }
  if (sql.includes('\u0000')) throw new SqlRefused('the SQL contains a NUL character', 'refused', undefined);
  let readsPrivate = false;
  try {
    const checked = await checker.check(
      sql,
      async (tables) => {
        const readable = await resolveTables(tables, resolve);
        readsPrivate = readable.some((table) => table.isPrivate);
        return readable.map(({ schema, table }) => ({ schema, table }));
      },
      options,
    );
    return { sql: checked, readsPrivate };
  } catch (error) {
    if (error instanceof SqlRefusal) throw refusedIn(error, sql);
    throw error;
  }
}
