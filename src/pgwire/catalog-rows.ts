import type { Account } from '../auth/account.js';
import type { TableColumn, TableListing } from '../tables/table-catalog.js';
import { pgTypeOfName } from './pg-types.js';

/**
 * What one caller's catalog holds: a row in pg_namespace, pg_roles, pg_class, pg_attribute,
 * information_schema.tables, … for each namespace and table of `listing`, which is exactly
 * what the caller may see (the table list's rule). OIDs are stable hashes of the names, so a
 * client that read a table's OID finds it again after the catalog is rebuilt.
 */

/** Relations filled per caller: the ones that name user tables, schemas and owners. */
export const PER_CALLER = new Set([
  'pg_catalog.pg_namespace',
  'pg_catalog.pg_class',
  'pg_catalog.pg_attribute',
  'pg_catalog.pg_description',
  'pg_catalog.pg_tables',
  'pg_catalog.pg_roles',
  'pg_catalog.pg_user',
  'pg_catalog.pg_authid',
  'pg_catalog.pg_stat_user_tables',
  'pg_catalog.pg_stat_all_tables',
  'information_schema.schemata',
  'information_schema.tables',
  'information_schema.columns',
]);

type Rows = Record<string, Record<string, unknown>[]>;

/** A stable OID from a name, above PostgreSQL's built-in range (16384). */
export function stableOid(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return 16384 + (hash % 1_000_000_000);
}

const PG_CATALOG_OID = 11;
const INFORMATION_SCHEMA_OID = 13_000;
const PG_CLASS_OID = 1259;

const roleOid = (name: string) => stableOid(`role:${name}`);
const namespaceOid = (name: string) => stableOid(`namespace:${name}`);
const tableOid = (t: TableListing) => stableOid(`table:${t.namespace}.${t.tableName}`);

export function callerRows(account: Account, listing: readonly TableListing[]): Rows {
  const rows: Rows = Object.fromEntries([...PER_CALLER].map((r) => [r, []]));
  const push = (relation: string, row: Record<string, unknown>) => rows[relation]?.push(row);
  push('pg_catalog.pg_namespace', { oid: PG_CATALOG_OID, nspname: 'pg_catalog', nspowner: 10 });
  push('pg_catalog.pg_namespace', {
    oid: INFORMATION_SCHEMA_OID,
    nspname: 'information_schema',
    nspowner: 10,
  });
  const namespaces = [...new Set([account.handle, ...listing.map((t) => t.namespace)])].sort();
  for (const name of namespaces) namespaceRows(name, push);
  for (const table of listing) {
    tableRows(table, push);
    for (const [i, column] of table.columns.entries()) columnRows(table, column, i + 1, push);
  }
  return rows;
}

type Push = (relation: string, row: Record<string, unknown>) => void;

/** A namespace: its schema, and a role of the same name that owns it. */
function namespaceRows(name: string, push: Push): void {
  push('pg_catalog.pg_namespace', { oid: namespaceOid(name), nspname: name, nspowner: roleOid(name) });
  const role = {
    oid: roleOid(name),
    rolname: name,
    rolsuper: false,
    rolinherit: true,
    rolcreaterole: false,
    rolcreatedb: false,
    rolcanlogin: true,
    rolreplication: false,
    rolconnlimit: -1,
    rolpassword: '********',
    rolbypassrls: false,
  };
  push('pg_catalog.pg_roles', role);
  push('pg_catalog.pg_authid', { ...role, rolpassword: null });
  push('pg_catalog.pg_user', {
    usename: name,
    usesysid: roleOid(name),
    usecreatedb: false,
    usesuper: false,
    userepl: false,
    usebypassrls: false,
    passwd: '********',
  });
  push('information_schema.schemata', { catalog_name: 'dune', schema_name: name, schema_owner: name });
}

function tableRows(table: TableListing, push: Push): void {
  const oid = tableOid(table);
  push('pg_catalog.pg_class', {
    oid,
    relname: table.tableName,
    relnamespace: namespaceOid(table.namespace),
    reltype: 0,
    reloftype: 0,
    relowner: roleOid(table.namespace),
    relam: 2,
    relfilenode: oid,
    reltablespace: 0,
    relpages: Math.ceil(table.sizeBytes / 8192),
    reltuples: table.rowCount,
    relallvisible: 0,
    reltoastrelid: 0,
    relhasindex: false,
    relisshared: false,
    relpersistence: 'p',
    relkind: 'r',
    relnatts: table.columns.length,
    relchecks: 0,
    relhasrules: false,
    relhastriggers: false,
    relhassubclass: false,
    relrowsecurity: false,
    relforcerowsecurity: false,
    relispopulated: true,
    relreplident: 'd',
    relispartition: false,
    relrewrite: 0,
    relfrozenxid: 0,
    relminmxid: 0,
  });
  push('pg_catalog.pg_tables', {
    schemaname: table.namespace,
    tablename: table.tableName,
    tableowner: table.namespace,
    hasindexes: false,
    hasrules: false,
    hastriggers: false,
    rowsecurity: false,
  });
  const stats = {
    relid: oid,
    schemaname: table.namespace,
    relname: table.tableName,
    n_live_tup: table.rowCount,
  };
  push('pg_catalog.pg_stat_user_tables', stats);
  push('pg_catalog.pg_stat_all_tables', stats);
  if (table.description)
    push('pg_catalog.pg_description', {
      objoid: oid,
      classoid: PG_CLASS_OID,
      objsubid: 0,
      description: table.description,
    });
  push('information_schema.tables', {
    table_catalog: 'dune',
    table_schema: table.namespace,
    table_name: table.tableName,
    table_type: 'BASE TABLE',
    is_insertable_into: 'NO',
    is_typed: 'NO',
  });
}

function columnRows(table: TableListing, column: TableColumn, position: number, push: Push): void {
  const type = pgTypeOfName(column.type);
  push('pg_catalog.pg_attribute', {
    attrelid: tableOid(table),
    attname: column.name,
    atttypid: type.oid,
    attstattarget: -1,
    attlen: type.length,
    attnum: position,
    attndims: type.dataType === 'ARRAY' ? 1 : 0,
    attcacheoff: -1,
    atttypmod: type.modifier,
    attbyval: type.length > 0 && type.length <= 8,
    attalign: 'd',
    attstorage: type.length > 0 ? 'p' : 'x',
    attcompression: '',
    attnotnull: !column.nullable,
    atthasdef: false,
    atthasmissing: false,
    attidentity: '',
    attgenerated: '',
    attisdropped: false,
    attislocal: true,
    attinhcount: 0,
    attcollation: type.oid === 25 ? 100 : 0,
  });
  const numeric = /^numeric\((\d+),(\d+)\)$/.exec(type.display);
  push('information_schema.columns', {
    table_catalog: 'dune',
    table_schema: table.namespace,
    table_name: table.tableName,
    column_name: column.name,
    ordinal_position: position,
    is_nullable: column.nullable ? 'YES' : 'NO',
    data_type: type.dataType,
    numeric_precision: numeric ? Number(numeric[1]) : null,
    numeric_scale: numeric ? Number(numeric[2]) : null,
    udt_catalog: 'dune',
    udt_schema: 'pg_catalog',
    udt_name: type.typname,
    dtd_identifier: String(position),
    is_self_referencing: 'NO',
    is_identity: 'NO',
    is_generated: 'NEVER',
    is_updatable: 'NO',
  });
}
