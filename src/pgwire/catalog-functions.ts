import type { DuckDBConnection } from '@duckdb/node-api';
import { SHARED_SCHEMA } from './catalog-database.js';

/**
 * PostgreSQL's catalog functions that clients call (psql, SQLAlchemy, pgjdbc: format_type,
 * pg_get_userbyid, obj_description, …), as DuckDB macros of the catalog database. Those that
 * read what a caller may see are defined in the caller's schema, over its relations; the rest
 * once. Definitions (pg_get_expr, pg_get_constraintdef, …) are NULL: no user table has
 * defaults, constraints, indexes or views.
 */

const P = SHARED_SCHEMA.pg_catalog;

/** Relation OIDs PostgreSQL fixes, for `'pg_class'::regclass` and the like. */
const CATALOG_OIDS: Record<string, number> = {
  pg_class: 1259,
  pg_namespace: 2615,
  pg_type: 1247,
  pg_proc: 1255,
  pg_attribute: 1249,
  pg_constraint: 2606,
  pg_database: 1262,
  pg_index: 2610,
  pg_description: 2609,
  pg_trigger: 2620,
  pg_rewrite: 2618,
  pg_am: 2601,
  pg_authid: 1260,
  pg_roles: 1260,
  pg_extension: 3079,
  pg_collation: 3456,
  pg_operator: 2617,
  pg_language: 2612,
  pg_tablespace: 1213,
};

/** format_type's names, for the types the catalog has. */
const TYPE_NAMES: Record<string, string> = {
  bool: 'boolean',
  int2: 'smallint',
  int4: 'integer',
  int8: 'bigint',
  float4: 'real',
  float8: 'double precision',
  varchar: 'character varying',
  bpchar: 'character',
  timestamp: 'timestamp without time zone',
  timestamptz: 'timestamp with time zone',
  time: 'time without time zone',
  timetz: 'time with time zone',
  varbit: 'bit varying',
  char: '"char"',
};

const constant = (value: string) => `NULL::VARCHAR`.replace('NULL', value);

const GLOBAL_MACROS: string[] = [
  // Types PostgreSQL names that DuckDB does not have, for casts in clients' catalog queries.
  'CREATE TYPE name AS VARCHAR',
  'CREATE TYPE int2vector AS SMALLINT[]',
  'CREATE TYPE oidvector AS BIGINT[]',
  'CREATE TYPE xid AS BIGINT',
  'CREATE TYPE cid AS BIGINT',
  'CREATE TYPE regproc AS VARCHAR',
  'CREATE TYPE aclitem AS VARCHAR',
  'CREATE TYPE pg_node_tree AS VARCHAR',
  `CREATE TABLE ${P}.pgw_type_names AS SELECT oid, CASE WHEN typname LIKE '\\_%' ESCAPE '\\' THEN NULL ELSE typname END AS typname, typelem FROM ${P}.pg_type`,
  `CREATE MACRO pgw_type_name(n) AS CASE ${Object.entries(TYPE_NAMES)
    .map(([from, to]) => `WHEN n = '${from}' THEN '${to.replaceAll("'", "''")}'`)
    .join(' ')} ELSE n END`,
  `CREATE MACRO format_type(t, m) AS CASE
     WHEN t IS NULL THEN NULL
     WHEN t = 1700 AND m > 4 THEN 'numeric(' || ((m - 4) >> 16) || ',' || ((m - 4) & 65535) || ')'
     ELSE coalesce(
       (SELECT CASE WHEN x.typname IS NULL THEN pgw_type_name((SELECT e.typname FROM ${P}.pgw_type_names e WHERE e.oid = x.typelem)) || '[]'
                    ELSE pgw_type_name(x.typname) END
        FROM ${P}.pgw_type_names x WHERE x.oid = t), '???') END`,
  `CREATE MACRO pgw_regtype(x) AS coalesce(TRY_CAST(x AS BIGINT),
     (SELECT oid FROM ${P}.pg_type WHERE typname = x::VARCHAR OR pgw_type_name(typname) = x::VARCHAR LIMIT 1))`,
  `CREATE MACRO pgw_regclass_fixed(x) AS CASE ${Object.entries(CATALOG_OIDS)
    .map(([name, oid]) => `WHEN x IN ('${name}', 'pg_catalog.${name}') THEN ${oid}`)
    .join(' ')} END`,
  ...[
    'pg_get_expr',
    'pg_get_constraintdef',
    'pg_get_indexdef',
    'pg_get_viewdef',
    'pg_get_triggerdef',
    'pg_get_ruledef',
  ].map(
    (name) =>
      `CREATE MACRO ${name}(a) AS ${constant('NULL')}, (a, b) AS ${constant('NULL')}, (a, b, c) AS ${constant('NULL')}`,
  ),
  ...[
    'pg_get_functiondef',
    'pg_get_function_arguments',
    'pg_get_function_identity_arguments',
    'pg_get_function_result',
    'pg_get_statisticsobjdef_columns',
    'pg_get_partkeydef',
    'pg_tablespace_location',
  ].map((name) => `CREATE MACRO ${name}(a) AS ${constant('NULL')}`),
  `CREATE MACRO pg_get_serial_sequence(a, b) AS ${constant('NULL')}`,
  `CREATE MACRO shobj_description(a, b) AS ${constant('NULL')}`,
  "CREATE MACRO pg_encoding_to_char(e) AS 'UTF8'",
  'CREATE MACRO pg_char_to_encoding(e) AS 6',
  'CREATE MACRO pg_relation_is_publishable(o) AS false',
  'CREATE MACRO pg_is_in_recovery() AS false',
  'CREATE MACRO txid_current() AS 1::BIGINT',
  'CREATE MACRO pg_type_is_visible(o) AS true',
  'CREATE MACRO pg_function_is_visible(o) AS true',
  'CREATE MACRO pg_collation_is_visible(o) AS true',
  'CREATE MACRO pg_indexes_size(o) AS 0::BIGINT',
  ...[
    'has_table_privilege',
    'has_schema_privilege',
    'has_database_privilege',
    'has_column_privilege',
    'has_any_column_privilege',
    'has_function_privilege',
    'has_sequence_privilege',
    'has_type_privilege',
    'pg_has_role',
  ].map((name) => `CREATE MACRO ${name}(a) AS true, (a, b) AS true, (a, b, c) AS true, (a, b, c, d) AS true`),
  'CREATE MACRO array_upper(a, d) AS CASE WHEN len(a) > 0 THEN len(a) END',
  // information_schema._pg_expandarray (pgjdbc's getPrimaryKeys): each element and its position.
  "CREATE MACRO _pg_expandarray(a) AS unnest(list_transform(range(len(a)), i -> {'x': a[i + 1], 'n': i + 1}))",
  'CREATE MACRO array_lower(a, d) AS CASE WHEN len(a) > 0 THEN 1 END',
  `CREATE MACRO quote_ident(s) AS CASE WHEN regexp_full_match(s, '[a-z_][a-z0-9_$]*') THEN s
     ELSE '"' || replace(s, '"', '""') || '"' END`,
  `CREATE MACRO pg_size_pretty(b) AS CASE
     WHEN abs(b) < 10 * 1024 THEN b || ' bytes'
     WHEN abs(b) < 10 * 1024 * 1024 THEN round(b / 1024) || ' kB'
     WHEN abs(b) < 10 * 1024 * 1024 * 1024 THEN round(b / 1024 / 1024) || ' MB'
     ELSE round(b / 1024 / 1024 / 1024) || ' GB' END`,
];

export async function defineGlobalFunctions(connection: DuckDBConnection): Promise<void> {
  for (const sql of GLOBAL_MACROS) await connection.run(sql);
}

/** Functions that read the caller's relations: defined in its schema `s`. */
export async function defineCallerFunctions(connection: DuckDBConnection, s: string): Promise<void> {
  const macros = [
    `CREATE MACRO ${s}.pg_table_is_visible(o, path) AS EXISTS (SELECT 1 FROM ${s}.pg_class c
       JOIN ${s}.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = o AND list_contains(path, n.nspname))`,
    `CREATE MACRO ${s}.pg_get_userbyid(o) AS coalesce((SELECT rolname FROM ${s}.pg_roles WHERE oid = o),
       CASE WHEN o = 10 THEN 'dune' ELSE 'unknown (OID=' || o || ')' END)`,
    `CREATE MACRO ${s}.obj_description(o) AS (SELECT description FROM ${s}.pg_description WHERE objoid = o AND objsubid = 0 LIMIT 1),
       (o, c) AS (SELECT description FROM ${s}.pg_description WHERE objoid = o AND objsubid = 0 LIMIT 1)`,
    `CREATE MACRO ${s}.col_description(o, n) AS (SELECT description FROM ${s}.pg_description WHERE objoid = o AND objsubid = n LIMIT 1)`,
    ...['pg_relation_size', 'pg_table_size', 'pg_total_relation_size'].map(
      (name) =>
        `CREATE MACRO ${s}.${name}(o) AS (SELECT relpages * 8192 FROM ${s}.pg_class WHERE oid = o),
           (o, f) AS (SELECT relpages * 8192 FROM ${s}.pg_class WHERE oid = o)`,
    ),
    `CREATE MACRO ${s}.pgw_regclass(x) AS coalesce(TRY_CAST(x AS BIGINT), pgw_regclass_fixed(x::VARCHAR),
       (SELECT c.oid FROM ${s}.pg_class c JOIN ${s}.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relname = x::VARCHAR OR n.nspname || '.' || c.relname = x::VARCHAR
           OR '"' || n.nspname || '"."' || c.relname || '"' = x::VARCHAR LIMIT 1))`,
    `CREATE MACRO ${s}.to_regclass(x) AS ${s}.pgw_regclass(x)`,
    `CREATE MACRO ${s}.pgw_regnamespace(x) AS coalesce(TRY_CAST(x AS BIGINT),
       (SELECT oid FROM ${s}.pg_namespace WHERE nspname = x::VARCHAR))`,
    `CREATE MACRO ${s}.pgw_regrole(x) AS coalesce(TRY_CAST(x AS BIGINT), (SELECT oid FROM ${s}.pg_roles WHERE rolname = x::VARCHAR))`,
  ];
  for (const sql of macros) await connection.run(sql);
}

/** Functions that read the caller's relations (their calls go to the caller's schema). */
export const CALLER_FUNCTIONS = new Set([
  'pg_table_is_visible',
  'pg_get_userbyid',
  'obj_description',
  'col_description',
  'pg_relation_size',
  'pg_table_size',
  'pg_total_relation_size',
  'to_regclass',
]);
