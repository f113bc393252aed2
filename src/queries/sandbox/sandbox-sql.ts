import { ApiError } from '../../errors.js';
import type { SqlChecker } from './checker-pool.js';
import { didYouMean } from './name-suggestions.js';
import type { NamedTable } from './sql-check.js';
import { type CheckOptions, type RefusalKind, SqlRefusal, type WrittenName } from './tree-checker.js';
import { nameKey, shownName } from './written-names.js';

/**
 * The sandbox around users' SQL (DESIGN §10). DuckDB's own parser decides what the SQL is
 * (`json_serialize_sql`); the checker walks the whole tree, refuses what a query may not
 * contain and lists the tables it names; each name goes through the caller's resolver and is
 * rewritten to the table it means; numbers keep their types (constant-types.ts) and
 * select-list items the column names DuckDB would have given them (column-names.ts);
 * `json_deserialize_sql` writes the checked tree back as SQL. That SQL is then parsed again
 * and checked once more, so what runs is what was checked even if DuckDB's SQL writer and
 * parser disagreed somewhere. No regular expression ever looks at the SQL text. The
 * database's own settings are the second wall (Database.open).
 *
 * Everything but the resolver runs on a worker thread of the checker (sandbox/checker-pool.ts),
 * on a DuckDB of its own (sandbox/sql-check.ts): its cost, linear in the SQL's length
 * (sandbox/parse-cost.ts bounds the shapes DuckDB parses in more), never stalls the event loop,
 * and it borrows none of the service's connections. Only the resolver runs here.
 */

/**
 * A table name as the user wrote it; `dune.` as catalog is accepted and removed; schema
 * undefined when unqualified. ASCII letters are lowercased, as DuckDB compares names
 * (`"ALICE".X` is `alice.x`).
 */
export interface WrittenTableName {
  schema?: string;
  table: string;
}
/** What a name means for this caller: the SQL to read it (already quoted, e.g. "alice"."dataset_x") and whether it is private. */
export interface ReadableTable {
  qualifiedName: string;
  isPrivate: boolean;
}
/**
 * undefined = the caller may not read it (it does not exist, or is another account's private table, or is the service's own).
 * `suggest` names the nearest tables the caller may see, for the refusal (name-suggestions.ts).
 */
export type TableResolver = ((name: WrittenTableName) => Promise<ReadableTable | undefined>) & {
  suggest?: (name: WrittenTableName) => Promise<string[]>;
};
export interface SandboxedSql {
  sql: string;
  readsPrivate: boolean;
}

/** A refusal (a 400 for the HTTP API) that also says why, and where in the SQL (0-based, as JavaScript indexes it). */
export class SqlRefused extends ApiError {
  constructor(
    message: string,
    readonly kind: RefusalKind,
    readonly position: number | undefined,
  ) {
    super('bad_request', message);
  }
}

/**
 * Bounds the cost of one check, with the shapes DuckDB parses in more than linear work refused
 * before parsing (sandbox/parse-cost.ts): the tree is 15–200 times the SQL's size, and a check
 * of this much SQL takes 0.1–1.5 s of a worker thread (docs/library-notes.md). Longer SQL is
 * refused before anything else.
 */
export const MAX_SQL_BYTES = 64 * 1024;

/** The catalog Dune's names may start with (`dune.namespace.table`). */
const DUNE_CATALOG = 'dune';

/**
 * Checks one user's SQL with DuckDB's own parser and returns it rewritten to read only
 * resolved tables; throws ApiError 400 (src/errors.ts) when refused, 503 when the checker is
 * too busy to check it now.
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
        const readable = await resolveAll(tables, resolve);
        return tables.map((table) => {
          const found = readable.get(nameKey(resolverQuestion(table.folded) as WrittenName)) as ReadableTable;
          readsPrivate ||= found.isPrivate;
          return splitQualifiedName(found.qualifiedName);
        });
      },
      options,
    );
    return { sql: checked, readsPrivate };
  } catch (error) {
    if (error instanceof SqlRefusal) {
      const position = positionIn(error, sql);
      const message = position === undefined ? error.message : `${error.message} at position ${position}`;
      throw new SqlRefused(message, error.kind, position);
    }
    throw error;
  }
}

/** Resolves each distinct name once, in the order the SQL names them. */
async function resolveAll(
  tables: readonly NamedTable[],
  resolve: TableResolver,
): Promise<Map<string, ReadableTable>> {
  const readable = new Map<string, ReadableTable>();
  for (const table of tables) {
    const question = resolverQuestion(table.folded);
    const key = question && nameKey(question);
    if (key !== undefined && readable.has(key)) continue;
    const found = question && (await resolve(question));
    // Worded the same whatever the reason: absent, private, the service's own, another catalog.
    if (!found || key === undefined) {
      // The nearest names the caller may see, never others (name-suggestions.ts).
      const near = question && resolve.suggest ? didYouMean(await resolve.suggest(question)) : '';
      throw new SqlRefusal(
        `table ${shownName(table.written)} does not exist${near}`,
        table.location,
        'byte',
        'unknown-table',
      );
    }
    readable.set(key, found);
  }
  return readable;
}

/** What the resolver is asked about a name: `dune.` and no catalog ask the same; none for another catalog. */
function resolverQuestion(name: WrittenName): WrittenTableName | undefined {
  if (name.catalog !== undefined && name.catalog !== DUNE_CATALOG) return undefined;
  return name.schema === undefined ? { table: name.table } : { schema: name.schema, table: name.table };
}

/**
 * `"schema"."table"` (or `"catalog"."schema"."table"`) as the resolver returns it, split into
 * its names. The resolver's text is ours (storage/sql.ts `qualifiedName`), never the user's.
 */
function splitQualifiedName(qualified: string): WrittenName {
  const parts: string[] = [];
  let i = 0;
  while (i < qualified.length) {
    if (qualified[i] !== '"') break;
    let name = '';
    for (i++; i < qualified.length; i++) {
      if (qualified[i] === '"') {
        if (qualified[i + 1] !== '"') break;
        i++;
      }
      name += qualified[i];
    }
    if (qualified[i] !== '"') break;
    parts.push(name);
    i++;
    if (i === qualified.length) break;
    if (qualified[i] !== '.') break;
    i++;
  }
  if (i !== qualified.length || parts.length < 2 || parts.length > 3 || qualified.includes('\u0000')) {
    throw new Error(`a table resolver returned ${JSON.stringify(qualified)}, not a quoted schema.table`);
  }
  const [table, schema, catalog] = parts.reverse() as [string, string, string | undefined];
  return { ...(catalog === undefined ? {} : { catalog }), schema, table };
}

/**
 * Where the refusal is, counting the user's SQL from 0 the way JavaScript indexes a string (as
 * the filter language's positions do): `sql.indexOf(...)` of what is refused. Messages end
 * with `at position N`.
 */
function positionIn(refusal: SqlRefusal, sql: string): number | undefined {
  if (refusal.location === undefined) return undefined;
  const before =
    refusal.unit === 'index'
      ? sql.slice(0, refusal.location)
      : refusal.unit === 'byte'
        ? Buffer.from(sql, 'utf8').subarray(0, refusal.location).toString('utf8')
        : Array.from(sql).slice(0, refusal.location).join('');
  return before.length;
}
