import { badRequest } from '../errors.js';
import { reusable, type Session } from '../storage/database.js';
import { nameItems, unnamedItems } from './column-names.js';
import { keepConstantTypes } from './constant-types.js';
import { didYouMean } from './name-suggestions.js';
import { isTreeObject, readTree, type TreeObject, type TreeValue, writeTree } from './parse-tree.js';
import { checkStatement, SqlRefusal, type TableReference, type WrittenName } from './tree-checker.js';

/**
 * The sandbox around users' SQL (DESIGN §10). DuckDB's own parser decides what the SQL is
 * (`json_serialize_sql`); the checker walks the whole tree, refuses what a query may not
 * contain and lists the tables it names; each name goes through the caller's resolver and is
 * rewritten to the table it means; numbers keep their types (constant-types.ts) and
 * select-list items the column names DuckDB would have given them (column-names.ts);
 * `json_deserialize_sql` writes the checked tree back as SQL. That SQL is then parsed again and checked once more, so what runs is what was checked
 * even if DuckDB's SQL writer and parser disagreed somewhere. No regular expression ever looks
 * at the SQL text. The database's own settings are the second wall (Database.open).
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

/**
 * Bounds the cost of one check. The tree is about 35 times the SQL's size, and DuckDB's
 * parser is worse than linear on long AND/OR chains: at this size the worst SQL measured (one
 * WHERE of 7,000 ANDed terms) takes a few hundred milliseconds, most of it in DuckDB's threads
 * rather than on the event loop (docs/library-notes.md). Longer SQL is refused before parsing.
 */
export const MAX_SQL_BYTES = 64 * 1024;

/**
 * Objects and arrays nested deeper than this in the tree are refused. DuckDB's parser stops
 * at 1,000 nested expressions itself; a level of SQL nesting is 2 to 4 levels of tree.
 */
export const MAX_TREE_DEPTH = 1_000;

/** The catalog Dune's names may start with (`dune.namespace.table`). */
const DUNE_CATALOG = 'dune';

/** Checks one user's SQL with DuckDB's own parser and returns it rewritten to read only resolved tables; throws ApiError 400 (src/errors.ts) when refused. */
export async function sandboxSql(
  session: Session,
  sql: string,
  resolve: TableResolver,
): Promise<SandboxedSql> {
  const bytes = Buffer.byteLength(sql, 'utf8');
  if (bytes > MAX_SQL_BYTES) {
    throw badRequest(`the SQL is ${bytes} bytes long; at most ${MAX_SQL_BYTES} bytes are accepted`);
  }
  if (sql.includes('\u0000')) throw badRequest('the SQL contains a NUL character');
  try {
    const root = await parseQuery(session, sql);
    const statement = (root.statements as TreeValue[])[0] as TreeValue;
    const unnamed = unnamedItems(statement);
    const references = checkStatement(statement);
    const readable = await resolveAll(references, resolve);
    await nameItems(session, unnamed);
    const allowed = new Set<string>();
    let readsPrivate = false;
    for (const reference of references) {
      const table = readable.get(nameKey(resolverQuestion(reference.folded) as WrittenName)) as ReadableTable;
      readsPrivate ||= table.isPrivate;
      const target = splitQualifiedName(table.qualifiedName);
      allowed.add(nameKey(target));
      rewriteReference(reference, target);
    }
    keepConstantTypes(statement);
    const rewritten = await writeQuery(session, root);
    verify(rewritten.tree, allowed);
    return { sql: rewritten.sql, readsPrivate };
  } catch (error) {
    if (error instanceof SqlRefusal) throw badRequest(withPosition(error, sql));
    throw error;
  }
}

/** Run on every check: kept prepared on each connection. */
const PARSE = reusable('SELECT json_serialize_sql(?::VARCHAR) AS tree');
const WRITE_AND_PARSE = reusable(
  'SELECT sql, json_serialize_sql(sql) AS tree FROM (SELECT json_deserialize_sql(?::JSON) AS sql)',
);

/** The tree of `sql`, which must be exactly one query. */
async function parseQuery(session: Session, sql: string): Promise<TreeObject> {
  const [row] = await session.all<{ tree: string }>(PARSE, [sql]);
  const root = readRoot(row?.tree);
  if (root.error === true) {
    // DuckDB serializes SELECT statements only; its message for anything else says just that.
    if (root.error_type !== 'parser') {
      throw new SqlRefusal(
        'only a single query can run (SELECT, WITH, VALUES, FROM, set operations); this SQL holds another kind of statement (DDL, DML, COPY, SET, PRAGMA, ATTACH, …)',
        undefined,
      );
    }
    const position = typeof root.position === 'string' ? Number(root.position) : undefined;
    throw new SqlRefusal(
      String(root.error_message),
      Number.isSafeInteger(position) ? position : undefined,
      'code point',
    );
  }
  const statements = root.statements;
  if (!Array.isArray(statements) || statements.length === 0)
    throw new SqlRefusal('the SQL holds no query', undefined);
  if (statements.length > 1) {
    throw new SqlRefusal(
      `only a single query can run; this SQL holds ${statements.length} statements`,
      undefined,
    );
  }
  return root;
}

function readRoot(json: string | undefined): TreeObject {
  const read = readTree(json ?? 'null', MAX_TREE_DEPTH);
  if ('refused' in read) {
    throw new SqlRefusal(
      read.refused === 'NUL'
        ? 'the SQL contains a NUL character'
        : `the SQL nests more than ${MAX_TREE_DEPTH} levels deep`,
      undefined,
    );
  }
  if (!isTreeObject(read.tree))
    throw new SqlRefusal('unsupported SQL construct: an unexpected parse tree', undefined);
  return read.tree;
}

/** Resolves each distinct name once, in the order the SQL names them. */
async function resolveAll(
  references: readonly TableReference[],
  resolve: TableResolver,
): Promise<Map<string, ReadableTable>> {
  const readable = new Map<string, ReadableTable>();
  for (const reference of references) {
    const question = resolverQuestion(reference.folded);
    const key = question && nameKey(question);
    if (key !== undefined && readable.has(key)) continue;
    const found = question && (await resolve(question));
    // Worded the same whatever the reason: absent, private, the service's own, another catalog.
    if (!found || key === undefined) {
      const near = question && resolve.suggest ? didYouMean(await resolve.suggest(question)) : '';
      throw new SqlRefusal(`table ${shownName(reference.written)} does not exist${near}`, reference.location);
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

const nameKey = (name: WrittenName): string =>
  JSON.stringify([name.catalog ?? '', name.schema ?? '', name.table]);

/** A name as written, for messages: plain parts bare, others double-quoted. */
function shownName(name: WrittenName): string {
  return [name.catalog, name.schema, name.table]
    .filter((part): part is string => part !== undefined)
    .map((part) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(part) ? part : `"${part.replaceAll('"', '""')}"`))
    .join('.');
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
 * Points a reference at the table it means. The reference keeps the name it was written with
 * as its alias, so `query_42.col` still names a column when `query_42` reads another table.
 */
function rewriteReference(reference: TableReference, target: WrittenName): void {
  const node = reference.node;
  node.catalog_name = target.catalog ?? '';
  node.schema_name = target.schema ?? '';
  node.table_name = target.table;
  if (node.alias === '' && target.table !== reference.folded.table) node.alias = reference.written.table;
}

/** The SQL of the checked tree, and DuckDB's own parse of that SQL, in one round trip. */
async function writeQuery(session: Session, root: TreeObject): Promise<{ sql: string; tree: TreeObject }> {
  let row: { sql: string; tree: string } | undefined;
  try {
    [row] = await session.all<{ sql: string; tree: string }>(WRITE_AND_PARSE, [writeTree(root)]);
  } catch (error) {
    throw new SqlRefusal(
      `the sandbox could not write this query back as SQL (${(error as Error).message.split('\n')[0]})`,
      undefined,
    );
  }
  if (!row) throw new SqlRefusal('the sandbox could not write this query back as SQL', undefined);
  return { sql: row.sql, tree: readRoot(row.tree) };
}

/**
 * Checks the SQL that will run as if a user had written it: one query, nothing refused, and
 * every table it names one of those the resolver returned, already written out in full.
 */
function verify(root: TreeObject, allowed: ReadonlySet<string>): void {
  const statements = root.statements;
  if (root.error === true || !Array.isArray(statements) || statements.length !== 1) {
    throw new SqlRefusal('the sandbox could not verify this query after rewriting it', undefined);
  }
  let references: TableReference[];
  try {
    references = checkStatement(statements[0] as TreeValue);
  } catch (error) {
    // Its position would be in the rewritten SQL, which the user never saw.
    if (!(error instanceof SqlRefusal)) throw error;
    throw new SqlRefusal(
      `the sandbox could not verify this query after rewriting it: ${error.message}`,
      undefined,
    );
  }
  for (const reference of references) {
    if (!allowed.has(nameKey(reference.written))) {
      throw new SqlRefusal(
        `the sandbox could not verify this query after rewriting it: it would read ${shownName(reference.written)}`,
        undefined,
      );
    }
  }
}

/**
 * `message at position N`, N counting the user's SQL from 0 the way JavaScript indexes a
 * string (as the filter language's positions do): `sql.indexOf(...)` of what is refused.
 */
function withPosition(refusal: SqlRefusal, sql: string): string {
  if (refusal.location === undefined) return refusal.message;
  const before =
    refusal.unit === 'byte'
      ? Buffer.from(sql, 'utf8').subarray(0, refusal.location).toString('utf8')
      : Array.from(sql).slice(0, refusal.location).join('');
  return `${refusal.message} at position ${before.length}`;
}
