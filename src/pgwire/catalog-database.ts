import { type DuckDBConnection, DuckDBInstance, type DuckDBType } from '@duckdb/node-api';
import type { Account } from '../auth/account.js';
import { wrapStorageError } from '../storage/storage-error.js';
import type { TableListing } from '../tables/table-catalog.js';
import definitions from './catalog-definitions.json' with { type: 'json' };
import { callerRows, PER_CALLER } from './catalog-rows.js';
import { parameterValue } from './parameter-values.js';
import type { OpenResult, StatementShape, WireParameter } from './run-statement.js';
import { SessionSettings } from './session-settings.js';

/**
 * The catalog clients inspect (pg_catalog, information_schema), in a DuckDB database of its
 * own, in memory, that holds no user data. Every relation of PostgreSQL 15's two catalog
 * schemas exists with its columns (catalog-definitions.json, read from PostgreSQL itself);
 * the ones that describe user tables are filled per caller, in a schema of the caller's own,
 * from exactly the tables that caller may see (the table list's rule): another account's
 * private table is never in it, so no query there can reveal even its name. The rest are
 * shared: built-in types, access methods, one database `dune`, the settings, and empty
 * catalogs (indexes, constraints, functions, …). PostgreSQL's functions the clients call are
 * macros (catalog-functions.ts). DuckDB's own catalog views are never reached: every name a
 * client writes is rewritten to these relations (catalog-queries.ts).
 */

const relations = definitions.relations as Record<string, string[]>;
const staticRows = definitions.staticRows as Record<string, Record<string, unknown>[]>;

/** Shared relations live in these schemas; a caller's in `c_<n>`. */
export { PER_CALLER };

export const SHARED_SCHEMA = {
  pg_catalog: 'shared_pg_catalog',
  information_schema: 'shared_information_schema',
} as const;

/** A relation's name inside a caller's schema: `pg_class`, `information_schema__tables`. */
export const callerTableName = (qualified: string) =>
  qualified.startsWith('pg_catalog.') ? qualified.slice('pg_catalog.'.length) : qualified.replace('.', '__');

export function isCatalogRelation(schema: string, name: string): boolean {
  return `${schema}.${name}` in relations;
}

/** PostgreSQL's column types as DuckDB's, for the emulated relations. */
function duckdbType(pgType: string): string {
  const array = pgType.endsWith('[]');
  const base = array ? pgType.slice(0, -2) : pgType;
  const scalar: Record<string, string> = {
    bigint: 'BIGINT',
    integer: 'INTEGER',
    smallint: 'SMALLINT',
    boolean: 'BOOLEAN',
    real: 'FLOAT',
    'double precision': 'DOUBLE',
    oid: 'BIGINT',
    regtype: 'BIGINT',
    xid: 'BIGINT',
    cardinal_number: 'INTEGER',
    int2vector: 'SMALLINT[]',
    oidvector: 'BIGINT[]',
    bytea: 'BLOB',
    interval: 'INTERVAL',
    'timestamp with time zone': 'TIMESTAMPTZ',
    time_stamp: 'TIMESTAMPTZ',
    numeric: 'DOUBLE',
  };
  const type = scalar[base] ?? 'VARCHAR';
  return array && !type.endsWith('[]') ? `${type}[]` : type;
}

const columnsOf = (qualified: string) =>
  (relations[qualified] ?? []).map((column) => {
    const space = column.indexOf(' ');
    return { name: column.slice(0, space), type: duckdbType(column.slice(space + 1)) };
  });

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

const DATABASE_OID = 16_383;

/** Callers' schemas kept; past this the least recently used one, idle for a minute, is dropped. */
const MAX_CALLERS = 256;
const IDLE_BEFORE_DROP_MS = 60_000;

/** Inserts rows (objects keyed by column) through one JSON parameter, parsed by DuckDB. */
async function insertRows(
  connection: DuckDBConnection,
  target: string,
  columns: { name: string; type: string }[],
  rows: readonly Record<string, unknown>[],
): Promise<void> {
  if (rows.length === 0) return;
  const structure = JSON.stringify([
    Object.fromEntries(columns.map((c) => [c.name, c.type.endsWith('[]') ? [c.type.slice(0, -2)] : c.type])),
  ]);
  const clean = rows.map((row) =>
    Object.fromEntries(
      columns.map((c) => {
        const value = row[c.name];
        // PostgreSQL's array text ('{…}') where a list is expected: not kept.
        return [c.name, c.type.endsWith('[]') && !Array.isArray(value) ? null : (value ?? null)];
      }),
    ),
  );
  await connection.run(
    `INSERT INTO ${target} BY NAME SELECT unnest(from_json($1::VARCHAR, $2::VARCHAR), recursive := true)`,
    [JSON.stringify(clean), structure],
  );
}

/** Every shared relation of the two catalog schemas, empty, in its `shared_` schema. */
async function createSharedRelations(connection: DuckDBConnection): Promise<void> {
  for (const [source, schema] of Object.entries(SHARED_SCHEMA)) {
    await connection.run(`CREATE SCHEMA ${schema}`);
    for (const qualified of Object.keys(relations).filter((r) => r.startsWith(`${source}.`))) {
      const name = qualified.slice(source.length + 1);
      const columns = columnsOf(qualified);
      await connection.run(
        `CREATE TABLE ${schema}.${quote(name)} (${columns.map((c) => `${quote(c.name)} ${c.type}`).join(', ')})`,
      );
    }
  }
}

/** The one database clients see, `dune`. */
const THE_DATABASE = {
  oid: DATABASE_OID,
  datname: 'dune',
  datdba: 10,
  encoding: 6,
  datlocprovider: 'c',
  datistemplate: false,
  datallowconn: true,
  datconnlimit: -1,
  dattablespace: 1663,
  datcollate: 'C.UTF-8',
  datctype: 'C.UTF-8',
};

/** The rows every caller shares: built-in types and the like, the database, the settings. */
async function fillSharedRelations(connection: DuckDBConnection): Promise<void> {
  const pgCatalog = (name: string) => `${SHARED_SCHEMA.pg_catalog}.${name}`;
  for (const [name, rows] of Object.entries(staticRows)) {
    await insertRows(connection, pgCatalog(name), columnsOf(`pg_catalog.${name}`), rows);
  }
  await insertRows(connection, pgCatalog('pg_database'), columnsOf('pg_catalog.pg_database'), [THE_DATABASE]);
  const settings = new SessionSettings('').all();
  await insertRows(
    connection,
    pgCatalog('pg_settings'),
    columnsOf('pg_catalog.pg_settings'),
    settings.map((s) => ({
      name: s.name,
      setting: s.setting,
      context: 'user',
      vartype: 'string',
      source: 'default',
      boot_val: s.setting,
      reset_val: s.setting,
      pending_restart: false,
    })),
  );
}

export class CatalogDatabase {
  private readonly callers = new Map<string, { schema: string; digest: string; used: number }>();
  private readonly building = new Map<string, Promise<string>>();
  private nextSchema = 1;

  private constructor(private readonly instance: DuckDBInstance) {}

  static async open(
    defineFunctions: (connection: DuckDBConnection) => Promise<void>,
  ): Promise<CatalogDatabase> {
    const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    const connection = await instance.connect();
    try {
      await connection.run("SET GLOBAL TimeZone = 'UTC'");
      await createSharedRelations(connection);
      await fillSharedRelations(connection);
      await defineFunctions(connection);
      // No file, setting or extension is reachable from a catalog query.
      await connection.run('SET allowed_directories = []');
      await connection.run('SET enable_external_access = false');
      await connection.run('SET lock_configuration = true');
    } catch (error) {
      connection.closeSync();
      instance.closeSync();
      throw error;
    }
    connection.closeSync();
    return new CatalogDatabase(instance);
  }

  connect(): Promise<DuckDBConnection> {
    return this.instance.connect();
  }

  /**
   * The caller's schema, filled from the tables it may see now (`listing`); rebuilt when
   * that list changed since the last query, so a table made private disappears at once.
   */
  async callerSchema(
    account: Account,
    listing: readonly TableListing[],
    defineCallerFunctions: (connection: DuckDBConnection, schema: string) => Promise<void>,
  ): Promise<string> {
    const key = `${account.handle}\u0000${account.admin}`;
    const digest = JSON.stringify(
      listing.map((t) => [t.namespace, t.tableName, t.description, t.rowCount, t.sizeBytes, t.columns]),
    );
    const known = this.callers.get(key);
    if (known && known.digest === digest) {
      known.used = Date.now();
      return known.schema;
    }
    const pending = this.building.get(key);
    if (pending) return pending;
    const build = (async () => {
      const schema = known?.schema ?? `c_${this.nextSchema++}`;
      const connection = await this.instance.connect();
      try {
        await connection.run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await connection.run(`CREATE SCHEMA ${schema}`);
        for (const qualified of PER_CALLER) {
          const columns = columnsOf(qualified);
          await connection.run(
            `CREATE TABLE ${schema}.${quote(callerTableName(qualified))} (${columns.map((c) => `${quote(c.name)} ${c.type}`).join(', ')})`,
          );
        }
        const rows = callerRows(account, listing);
        for (const [qualified, list] of Object.entries(rows)) {
          await insertRows(
            connection,
            `${schema}.${quote(callerTableName(qualified))}`,
            columnsOf(qualified),
            list,
          );
        }
        await defineCallerFunctions(connection, schema);
      } finally {
        connection.closeSync();
      }
      this.callers.set(key, { schema, digest, used: Date.now() });
      await this.dropIdleCallers();
      return schema;
    })();
    this.building.set(key, build);
    try {
      return await build;
    } finally {
      this.building.delete(key);
    }
  }

  /** Keeps the number of callers' schemas bounded: the oldest idle ones go. */
  private async dropIdleCallers(): Promise<void> {
    if (this.callers.size <= MAX_CALLERS) return;
    const idle = [...this.callers]
      .filter(([, c]) => Date.now() - c.used > IDLE_BEFORE_DROP_MS)
      .sort((a, b) => a[1].used - b[1].used);
    const connection = await this.instance.connect();
    try {
      for (const [key, caller] of idle.slice(0, this.callers.size - MAX_CALLERS)) {
        this.callers.delete(key);
        await connection.run(`DROP SCHEMA IF EXISTS ${caller.schema} CASCADE`);
      }
    } finally {
      connection.closeSync();
    }
  }

  /** Prepares, binds and starts a catalog query; its rows are read as they come. */
  async open(
    sql: string,
    parameters: readonly WireParameter[],
    interrupt: (stop: () => void) => void,
  ): Promise<OpenResult & { close(): void }> {
    const connection = await this.instance.connect();
    interrupt(() => connection.interrupt());
    try {
      const statement = await connection.prepare(sql);
      const types: (DuckDBType | undefined)[] = [];
      for (let i = 1; i <= statement.parameterCount; i++) {
        try {
          types.push(statement.parameterType(i));
        } catch {
          types.push(undefined);
        }
      }
      const bound = parameters.map((p, i) => parameterValue(p.raw, p.format, i, p.oid, types[i]));
      statement.bind(
        bound.map((b) => b.value),
        bound.map((b) => b.type as DuckDBType),
      );
      const result = await statement.stream();
      statement.destroySync();
      const names = result.columnNames();
      const columnTypes = result.columnTypes();
      return {
        columns: names.map((name, i) => ({ name, type: columnTypes[i] as DuckDBType })),
        next: async () => {
          try {
            const chunk = await result.fetchChunk();
            return chunk && chunk.rowCount > 0 ? chunk : null;
          } catch (error) {
            throw wrapStorageError(error, sql);
          }
        },
        close: () => connection.closeSync(),
      };
    } catch (error) {
      connection.closeSync();
      throw wrapStorageError(error, sql);
    }
  }

  async describe(sql: string): Promise<StatementShape> {
    const connection = await this.instance.connect();
    try {
      const statement = await connection.prepare(sql);
      const parameterTypes: (DuckDBType | undefined)[] = [];
      for (let i = 1; i <= statement.parameterCount; i++) {
        try {
          parameterTypes.push(statement.parameterType(i));
        } catch {
          parameterTypes.push(undefined);
        }
      }
      const columns: { name: string; type: DuckDBType | undefined }[] = [];
      for (let i = 0; i < statement.columnCount; i++) {
        let type: DuckDBType | undefined;
        try {
          type = statement.columnType(i);
        } catch {
          type = undefined;
        }
        columns.push({ name: statement.columnName(i), type });
      }
      statement.destroySync();
      return { parameterTypes, columns };
    } catch (error) {
      throw wrapStorageError(error, sql);
    } finally {
      connection.closeSync();
    }
  }

  close(): void {
    this.instance.closeSync();
  }
}
