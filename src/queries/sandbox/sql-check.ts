import { reusable, type Session } from '../../storage/database.js';
import { nameItems, type UnnamedItem, unnamedItems } from './column-names.js';
import { keepConstantTypes } from './constant-types.js';
import { type ParseCost, parseCost } from './parse-cost.js';
import { isTreeObject, readTree, type TreeObject, type TreeValue, writeTree } from './parse-tree.js';
import { SqlRefusal } from './refusals.js';
import { type NamedTable, nameKey, type QualifiedTable, shownName } from './table-names.js';
import { type CheckOptions, checkStatement, type TableReference } from './tree-checker.js';

/**
 * One user's SQL through the sandbox's steps that need no catalog (DESIGN §10), as a worker
 * thread runs them on a DuckDB of its own (check-worker.ts): the estimate of the parse's cost
 * (parse-cost.ts), DuckDB's parse (`json_serialize_sql`), the walk of the whole tree
 * (tree-checker.ts) listing the tables it names; then, once the service has resolved those
 * names, the rewrite, DuckDB's SQL writer (`json_deserialize_sql`), and the parse and walk of
 * that SQL again, so that what runs is what was checked even if DuckDB's writer and parser
 * disagreed somewhere. No regular expression ever decides what the SQL text means.
 */

/**
 * Objects and arrays nested deeper than this in the tree are refused. DuckDB's parser stops
 * at 1,000 nested expressions itself; a level of SQL nesting is 2 to 4 levels of tree.
 */
export const MAX_TREE_DEPTH = 1_000;

/**
 * The largest tree read, in characters per byte of SQL (plus a constant): every shape measured
 * makes 15–200 (docs/library-notes.md); the few that make more are refused before parsing
 * (parse-cost.ts). Past this, for a shape nobody measured, the check stops rather than reading
 * a tree that is not linear in the SQL's length.
 */
export const TREE_CHARS_PER_SQL_BYTE = 256;
const TREE_CHARS_SLACK = 4 * 1024 * 1024;

/**
 * What a check read and wrote, in units that grow with its work whatever the machine's load
 * (test/queries/hostile-shapes.test.ts holds them linear in the SQL's length).
 */
export interface CheckWork {
  sqlBytes: number;
  /** DuckDB's parse, estimated before it (parse-cost.ts). */
  parse: ParseCost;
  /** The tree read. */
  treeChars: number;
  /** The trees of the select-list items named (column-names.ts). */
  itemChars: number;
  /** The tree of the rewritten SQL, parsed again; 0 until finished. */
  rewrittenTreeChars: number;
}

/** Run on every check: kept prepared on each connection. */
const PARSE = reusable('SELECT json_serialize_sql(?::VARCHAR) AS tree');
const WRITE_AND_PARSE = reusable(
  'SELECT sql, json_serialize_sql(sql) AS tree FROM (SELECT json_deserialize_sql(?::JSON) AS sql)',
);

/** A check between its two halves: the parsed, checked tree, waiting for its tables to be resolved. */
export class SqlCheck {
  private constructor(
    private readonly root: TreeObject,
    private readonly references: readonly TableReference[],
    private readonly unnamed: readonly UnnamedItem[],
    private readonly treeLimit: number,
    private readonly options: CheckOptions,
    readonly work: CheckWork,
  ) {}

  /** Parses and checks `sql`; throws SqlRefusal for what a query may not be or contain. */
  static async begin(session: Session, sql: string, options: CheckOptions = {}): Promise<SqlCheck> {
    const estimate = parseCost(sql);
    if (estimate.refusal) throw new SqlRefusal(estimate.refusal.message, estimate.refusal.position, 'index');
    const sqlBytes = Buffer.byteLength(sql, 'utf8');
    const treeLimit = TREE_CHARS_PER_SQL_BYTE * sqlBytes + TREE_CHARS_SLACK;
    const [row] = await session.all<{ tree: string }>(PARSE, [sql]);
    const treeChars = row?.tree.length ?? 0;
    const root = parsedQuery(readRoot(row?.tree, treeLimit));
    const statement = (root.statements as TreeValue[])[0] as TreeValue;
    // The top level's items alone hold at most the whole tree; nested ones once more.
    const unnamed = unnamedItems(statement, 2 * treeChars);
    const references = checkStatement(statement, options);
    const itemChars = unnamed.reduce((sum, item) => sum + item.tree.length, 0);
    const work = { sqlBytes, parse: estimate.cost, treeChars, itemChars, rewrittenTreeChars: 0 };
    return new SqlCheck(root, references, unnamed, treeLimit, options, work);
  }

  /** The tables the SQL names (not its CTEs), in the order it names them. */
  get tables(): NamedTable[] {
    return this.references.map(({ written, folded, location }) => ({ written, folded, location }));
  }

  /**
   * Points each table reference at what the service resolved it to (`targets[i]` for
   * `tables[i]`), and returns the SQL to run, verified.
   */
  async finish(session: Session, targets: readonly QualifiedTable[]): Promise<string> {
    if (targets.length !== this.references.length) {
      throw new Error(`${targets.length} resolved tables for ${this.references.length} references`);
    }
    const allowed = new Set<string>();
    this.references.forEach((reference, i) => {
      const target = targets[i] as QualifiedTable;
      allowed.add(nameKey(target));
      rewriteReference(reference, target);
    });
    await nameItems(session, this.unnamed);
    const statement = (this.root.statements as TreeValue[])[0] as TreeValue;
    keepConstantTypes(statement);
    const rewritten = await writeQuery(session, this.root, this.treeLimit);
    this.work.rewrittenTreeChars = rewritten.treeChars;
    verify(rewritten.tree, allowed, this.options);
    return rewritten.sql;
  }
}

/** The tree of one query; refused for anything else. */
function parsedQuery(root: TreeObject): TreeObject {
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
      'syntax',
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

function readRoot(json: string | undefined, treeLimit: number): TreeObject {
  if (json !== undefined && json.length > treeLimit) {
    throw new SqlRefusal(
      `this SQL's parse tree is too large to check (${(json.length / 1e6).toFixed(1)} MB, at most ${TREE_CHARS_PER_SQL_BYTE} bytes per byte of SQL): write it with fewer repeated parts`,
      undefined,
    );
  }
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

/**
 * Points a reference at the table it means. The reference keeps the name it was written with
 * as its alias, so `query_42.col` still names a column when `query_42` reads another table.
 */
function rewriteReference(reference: TableReference, target: QualifiedTable): void {
  // The resolver's names are the service's own; a NUL would read as a number's mark in the tree
  // (parse-tree.ts), so one is a bug, never the SQL's doing.
  if (`${target.schema}${target.table}`.includes('\u0000')) {
    throw new Error(`a table resolver answered ${JSON.stringify(target)}, a name holding a NUL`);
  }
  const node = reference.node;
  node.catalog_name = '';
  node.schema_name = target.schema;
  node.table_name = target.table;
  if (node.alias === '' && target.table !== reference.folded.table) node.alias = reference.written.table;
}

/** The SQL of the checked tree, and DuckDB's own parse of that SQL, in one round trip. */
async function writeQuery(
  session: Session,
  root: TreeObject,
  treeLimit: number,
): Promise<{ sql: string; tree: TreeObject; treeChars: number }> {
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
  return { sql: row.sql, tree: readRoot(row.tree, treeLimit), treeChars: row.tree.length };
}

/**
 * Checks the SQL that will run as if a user had written it: one query, nothing refused, and
 * every table it names one of those the resolver returned, already written out in full.
 */
function verify(root: TreeObject, allowed: ReadonlySet<string>, options: CheckOptions): void {
  const statements = root.statements;
  if (root.error === true || !Array.isArray(statements) || statements.length !== 1) {
    throw new SqlRefusal('the sandbox could not verify this query after rewriting it', undefined);
  }
  let references: TableReference[];
  try {
    references = checkStatement(statements[0] as TreeValue, options);
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
