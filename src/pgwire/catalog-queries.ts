import type { Account } from '../auth/account.js';
import {
  isTreeObject,
  readTree,
  type TreeObject,
  type TreeValue,
  writeTree,
} from '../queries/sandbox/parse-tree.js';
import type { Database } from '../storage/database.js';
import { listTables, type TableListing } from '../tables/table-catalog.js';
import type { StatementInterrupts } from './cancel.js';
import { CatalogDatabase } from './catalog-database.js';
import { defineCallerFunctions, defineGlobalFunctions } from './catalog-functions.js';
import {
  type CatalogCaller,
  lowerOf,
  Rewrite,
  survey,
  type Templates,
  withoutCastQualifiers,
} from './catalog-rewrite.js';
import { Portal } from './portal.js';
import type { StatementShape, WireParameter } from './run-statement.js';
import { SQLSTATE, WireError } from './sql-errors.js';
import type { SqlShape } from './statement-cache.js';

/**
 * Which queries are about the catalog, and how they run. A query naming a relation of
 * pg_catalog or information_schema (qualified, or unqualified as PostgreSQL's search path
 * finds it), or calling a catalog function without reading any table (`SELECT version()`,
 * `current_schema()`), is a catalog query; everything else goes to the sandbox. DuckDB's
 * parser reads the query (json_serialize_sql, in the catalog database, which holds no user
 * data); its tree is rewritten so that every relation it names is the caller's own or a shared
 * one (catalog-database.ts), PostgreSQL's syntax DuckDB lacks becomes DuckDB's (`~` is a
 * partial regular expression match, `::regclass` a lookup, `COLLATE pg_catalog.default`
 * nothing), and the session's values (`current_schema`, `version()`, `current_setting(…)`)
 * become constants. A query that names both the catalog and users' tables is refused.
 */

export type { CatalogCaller };

export interface CatalogQueries {
  plan(caller: CatalogCaller, text: string): Promise<{ kind: 'catalog'; sql: string } | undefined>;
  open(
    sql: string,
    parameters: readonly WireParameter[],
    formats: readonly number[],
    interrupts: StatementInterrupts,
  ): Promise<Portal>;
  describe(sql: string, interrupts: StatementInterrupts): Promise<StatementShape>;
  /** Whether SQL reads no table, and whether its answer is always the same (statement-cache.ts). */
  shape(text: string): Promise<SqlShape>;
  close(): Promise<void>;
}

/** Words without which a query cannot be about the catalog: the rest skip DuckDB's parser here. */
const NEEDLES = [
  'pg_',
  'information_schema',
  'version',
  'current_',
  'session_user',
  'user',
  'has_',
  'obj_description',
  'col_description',
  'format_type',
  'txid',
  'inet_',
  'quote_ident',
  'reg',
  'to_regclass',
  'array_upper',
  'array_lower',
];

/** Every table a catalog query reads, at most (a caller sees up to this many in the catalog). */
const LISTING_PAGE = 10_000;

export class PgCatalog implements CatalogQueries {
  private constructor(
    private readonly catalog: CatalogDatabase,
    private readonly database: Database,
    private readonly templates: Templates,
    /** Functions whose every overload is CONSISTENT in DuckDB: same arguments, same result. */
    private readonly consistent: ReadonlySet<string>,
  ) {}

  static async open(database: Database): Promise<PgCatalog> {
    const catalog = await CatalogDatabase.open(defineGlobalFunctions);
    const connection = await catalog.connect();
    try {
      const reader = await connection.runAndReadAll(
        `SELECT json_serialize_sql('SELECT ''x'', f(1), NOT true')`,
      );
      const tree = parseTree(String(reader.getRows()[0]?.[0]));
      const statement = (tree.statements as TreeObject[])[0] as TreeObject;
      const items = (statement.node as TreeObject).select_list as TreeObject[];
      const [constant, call, not] = items as [TreeObject, TreeObject, TreeObject];
      const functions = await connection.runAndReadAll(
        `SELECT function_name FROM duckdb_functions() GROUP BY function_name
         HAVING bool_and(coalesce(stability = 'CONSISTENT', false))`,
      );
      const consistent = new Set(functions.getRows().map((row) => String(row[0]).toLowerCase()));
      return new PgCatalog(catalog, database, { constant, call, not }, consistent);
    } finally {
      connection.closeSync();
    }
  }

  async plan(caller: CatalogCaller, text: string): Promise<{ kind: 'catalog'; sql: string } | undefined> {
    const lower = text.toLowerCase();
    if (!NEEDLES.some((needle) => lower.includes(needle))) return undefined;
    const tree = await this.parse(withoutCastQualifiers(text));
    const statement = tree?.statements;
    if (!tree || tree.error === true || !Array.isArray(statement) || statement.length !== 1) return undefined;
    const found = survey(statement[0] as TreeValue);
    if (found.other && found.catalog)
      throw new WireError(
        SQLSTATE.featureNotSupported,
        'a query cannot read both the catalog (pg_catalog, information_schema) and tables: query them separately',
      );
    if (found.other || !(found.catalog || found.calls)) return undefined;
    const schema = await this.catalog.callerSchema(
      caller.account,
      await this.listing(caller.account),
      defineCallerFunctions,
    );
    const rewritten = new Rewrite(this.templates, schema, caller, found.ctes).value(tree) as TreeObject;
    return { kind: 'catalog', sql: await this.write(rewritten) };
  }

  async open(
    sql: string,
    parameters: readonly WireParameter[],
    formats: readonly number[],
    interrupts: StatementInterrupts,
  ): Promise<Portal> {
    let stop: () => void = () => undefined;
    const session = { interrupt: () => stop() };
    interrupts.attach(session);
    const result = await interrupts.guard(() =>
      this.catalog.open(sql, parameters, (interrupt) => {
        stop = interrupt;
      }),
    );
    return Portal.over(
      { columns: result.columns, next: () => interrupts.guard(() => result.next()), stop: () => stop() },
      formats,
      () => {
        interrupts.detach(session);
        result.close();
      },
    );
  }

  async shape(text: string): Promise<SqlShape> {
    const tree = await this.parse(text);
    const statements = tree?.statements;
    if (!tree || tree.error === true || !Array.isArray(statements) || statements.length !== 1)
      return { tableFree: false, constant: false };
    let tableFree = true;
    let constant = true;
    const visit = (value: TreeValue): void => {
      if (Array.isArray(value)) {
        for (const item of value) visit(item);
        return;
      }
      if (!isTreeObject(value)) return;
      // Only SELECTs without any FROM (DESCRIBE and SHOW are a FROM of a SHOW_REF).
      if (value.type === 'BASE_TABLE' || value.type === 'TABLE_FUNCTION' || value.type === 'SHOW_REF')
        tableFree = false;
      if (isTreeObject(value.from_table) && value.from_table.type !== 'EMPTY') tableFree = false;
      if (value.class === 'PARAMETER' || value.class === 'COLUMN_REF') constant = false;
      if (value.class === 'FUNCTION' || value.class === 'WINDOW') {
        const schema = lowerOf(value.schema);
        if ((schema !== '' && schema !== 'main') || !this.consistent.has(lowerOf(value.function_name)))
          constant = false;
      }
      for (const key in value) visit(value[key] as TreeValue);
    };
    visit(statements[0] as TreeValue);
    return { tableFree, constant: tableFree && constant };
  }

  describe(sql: string, interrupts: StatementInterrupts): Promise<StatementShape> {
    return interrupts.guard(() => this.catalog.describe(sql));
  }

  async close(): Promise<void> {
    this.catalog.close();
  }

  /** What the caller may see, by the table list's own rule (admins: everything). */
  private listing(account: Account): Promise<TableListing[]> {
    return this.database.read(
      async (session) => (await listTables(session, account, LISTING_PAGE, 0)).tables,
    );
  }

  private async parse(text: string): Promise<TreeObject | undefined> {
    const connection = await this.catalog.connect();
    try {
      const reader = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR)', [text]);
      return parseTree(String(reader.getRows()[0]?.[0]));
    } catch {
      return undefined;
    } finally {
      connection.closeSync();
    }
  }

  private async write(tree: TreeObject): Promise<string> {
    const connection = await this.catalog.connect();
    try {
      const reader = await connection.runAndReadAll('SELECT json_deserialize_sql($1::JSON)', [
        writeTree(tree),
      ]);
      return String(reader.getRows()[0]?.[0]);
    } catch (error) {
      throw new WireError(
        SQLSTATE.featureNotSupported,
        `this catalog query is not supported: ${(error as Error).message.split('\n')[0]}`,
      );
    } finally {
      connection.closeSync();
    }
  }
}

function parseTree(json: string): TreeObject {
  const read = readTree(json, 2_000);
  if ('refused' in read || !isTreeObject(read.tree))
    throw new WireError(SQLSTATE.programLimit, 'the query nests too deep');
  return read.tree;
}
