/**
 * SQL that tries to get out of the sandbox (DESIGN §10), kept as data so that it can be run
 * both against `sandboxSql` directly (test/queries/hostile-sql.test.ts) and end to end
 * through the HTTP API (`POST /v1/sql/execute`, creating a query).
 *
 * Every entry is run as account `alice` (a premium key) after the tables of
 * HOSTILE_SQL_TABLES exist; through the API, create them with `POST /v1/table/create`
 * (columns HOSTILE_SQL_COLUMNS) using each owner's key, then insert a row. The outcome is one of:
 * - `refused`: a 400 whose `error` matches the pattern (which tolerates a prefix, such as
 *   the name of the field the SQL came in), before anything runs;
 * - `fails`: accepted (only running it can tell), the execution ends `QUERY_STATE_FAILED`
 *   with an error matching the pattern.
 * Neither may change any stored data or read another account's private table.
 */

export interface HostileTable {
  owner: string;
  table: string;
  isPrivate: boolean;
}

/** What must exist: `bob.secret` is another account's private table, `alice.notes` alice's own. */
export const HOSTILE_SQL_TABLES: readonly HostileTable[] = [
  { owner: 'alice', table: 'notes', isPrivate: true },
  { owner: 'bob', table: 'secret', isPrivate: true },
  { owner: 'bob', table: 'public_t', isPrivate: false },
];

/** The columns of each of those tables. */
export const HOSTILE_SQL_COLUMNS = [
  { name: 'who', type: 'varchar', nullable: true },
  { name: 'n', type: 'bigint', nullable: true },
] as const;

export type HostileOutcome = { refused: RegExp } | { fails: RegExp };

export interface HostileSql {
  name: string;
  sql: string;
  outcome: HostileOutcome;
}

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The one wording for every table a query may not read, whatever the reason. */
const noTable = (shown: string) => ({
  refused: new RegExp(`table ${literal(shown)} does not exist at position \\d+$`),
});
const notAQuery = { refused: /only a single query can run .*another kind of statement/ };
const tableFunction = (name: string) => ({
  refused: new RegExp(
    `table function ${literal(name)} is not available in queries; the ones that are: range, `,
  ),
});
const fn = (name: string) => ({
  refused: new RegExp(`function ${literal(name)} (is not available in queries|does not exist)`),
});
const parameters = { refused: /prepared-statement parameters \(\$1, \?, \$name\) are not supported/ };
const syntaxError = { refused: /syntax error at or near/ };

/** Each nested subquery reads bob.secret; every one must be found however deep it hides. */
const SECRET = '(SELECT max(n) FROM bob.secret)';

const statementKinds: HostileSql[] = [
  { name: 'DROP TABLE', sql: 'DROP TABLE alice.notes', outcome: notAQuery },
  { name: 'DELETE', sql: 'DELETE FROM bob.public_t', outcome: notAQuery },
  { name: 'INSERT', sql: "INSERT INTO alice.notes VALUES ('x', 1)", outcome: notAQuery },
  { name: 'UPDATE', sql: 'UPDATE alice.notes SET n = 2', outcome: notAQuery },
  {
    name: 'CREATE TABLE AS',
    sql: 'CREATE TABLE alice.copied AS SELECT * FROM bob.secret',
    outcome: notAQuery,
  },
  { name: 'CREATE VIEW', sql: 'CREATE VIEW alice.v AS SELECT * FROM bob.secret', outcome: notAQuery },
  { name: 'CREATE MACRO', sql: 'CREATE MACRO evil() AS TABLE SELECT * FROM bob.secret', outcome: notAQuery },
  { name: 'CREATE TYPE', sql: "CREATE TYPE mood AS ENUM ('a')", outcome: notAQuery },
  { name: 'CREATE SECRET', sql: "CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 'v')", outcome: notAQuery },
  { name: 'ALTER TABLE', sql: 'ALTER TABLE bob.public_t RENAME TO mine', outcome: notAQuery },
  { name: 'COPY TO a file', sql: "COPY bob.secret TO '/tmp/stolen.csv'", outcome: notAQuery },
  {
    name: 'COPY a query to parquet',
    sql: "COPY (SELECT 1) TO '/tmp/x.parquet' (FORMAT parquet)",
    outcome: notAQuery,
  },
  { name: 'COPY FROM a file', sql: "COPY alice.notes FROM '/etc/passwd'", outcome: notAQuery },
  { name: 'ATTACH', sql: "ATTACH '/tmp/other.duckdb' AS other", outcome: notAQuery },
  { name: 'DETACH', sql: 'DETACH other', outcome: notAQuery },
  { name: 'USE', sql: 'USE bob', outcome: notAQuery },
  { name: 'INSTALL', sql: 'INSTALL httpfs', outcome: notAQuery },
  { name: 'LOAD', sql: 'LOAD httpfs', outcome: notAQuery },
  { name: 'SET', sql: 'SET enable_external_access = true', outcome: notAQuery },
  { name: 'SET VARIABLE', sql: 'SET VARIABLE x = 1', outcome: notAQuery },
  { name: 'RESET', sql: 'RESET lock_configuration', outcome: notAQuery },
  { name: 'PRAGMA', sql: 'PRAGMA database_list', outcome: notAQuery },
  { name: 'CALL', sql: "CALL pragma_table_info('bob.secret')", outcome: notAQuery },
  { name: 'EXPORT DATABASE', sql: "EXPORT DATABASE '/tmp/dump'", outcome: notAQuery },
  { name: 'BEGIN', sql: 'BEGIN TRANSACTION', outcome: notAQuery },
  { name: 'CHECKPOINT', sql: 'CHECKPOINT', outcome: notAQuery },
  { name: 'VACUUM', sql: 'VACUUM', outcome: notAQuery },
  { name: 'EXPLAIN', sql: 'EXPLAIN SELECT * FROM bob.secret', outcome: notAQuery },
  { name: 'PREPARE', sql: 'PREPARE p AS SELECT 1', outcome: notAQuery },
  {
    name: 'a PIVOT statement (runs a query to find its columns)',
    sql: 'PIVOT bob.secret ON who USING sum(n)',
    outcome: notAQuery,
  },
  { name: 'a query, then DROP', sql: 'SELECT 1; DROP TABLE alice.notes', outcome: notAQuery },
  { name: 'DROP hidden after a comment', sql: '/* SELECT 1 */ DROP TABLE alice.notes', outcome: notAQuery },
  {
    name: 'two queries',
    sql: 'SELECT 1; SELECT 2',
    outcome: { refused: /only a single query can run; this SQL holds 2 statements$/ },
  },
  { name: 'no statement at all', sql: '-- nothing here\n', outcome: { refused: /the SQL holds no query$/ } },
  { name: 'a $1 parameter', sql: 'SELECT * FROM alice.notes WHERE n = $1', outcome: parameters },
  { name: 'a ? parameter', sql: 'SELECT ?', outcome: parameters },
  { name: 'a named parameter', sql: 'SELECT $name', outcome: parameters },
  {
    name: 'DESCRIBE',
    sql: 'DESCRIBE bob.secret',
    outcome: { refused: /DESCRIBE, SHOW and SUMMARIZE are not supported/ },
  },
  {
    name: 'SHOW TABLES',
    sql: 'SHOW ALL TABLES',
    outcome: { refused: /DESCRIBE, SHOW and SUMMARIZE are not supported/ },
  },
  {
    name: 'SUMMARIZE',
    sql: 'SUMMARIZE bob.secret',
    outcome: { refused: /DESCRIBE, SHOW and SUMMARIZE are not supported/ },
  },
];

const filesAndCatalog: HostileSql[] = [
  { name: 'read_csv', sql: "SELECT * FROM read_csv('/etc/passwd')", outcome: tableFunction('read_csv') },
  {
    name: 'read_csv_auto',
    sql: "SELECT * FROM read_csv_auto('/etc/passwd')",
    outcome: tableFunction('read_csv_auto'),
  },
  {
    name: 'read_text',
    sql: "SELECT content FROM read_text('/etc/passwd')",
    outcome: tableFunction('read_text'),
  },
  {
    name: 'read_blob of the database',
    sql: "SELECT * FROM read_blob('data/warehouse.duckdb')",
    outcome: tableFunction('read_blob'),
  },
  {
    name: 'read_parquet',
    sql: "SELECT * FROM read_parquet('/tmp/*.parquet')",
    outcome: tableFunction('read_parquet'),
  },
  { name: 'read_json', sql: "SELECT * FROM read_json('/tmp/x.json')", outcome: tableFunction('read_json') },
  { name: 'glob', sql: "SELECT * FROM glob('/*')", outcome: tableFunction('glob') },
  { name: 'sniff_csv', sql: "SELECT * FROM sniff_csv('/etc/passwd')", outcome: tableFunction('sniff_csv') },
  {
    name: 'a file as a table (replacement scan)',
    sql: "SELECT * FROM '/etc/passwd'",
    outcome: noTable('"/etc/passwd"'),
  },
  { name: 'FROM-first replacement scan', sql: "FROM 'data/keys.json'", outcome: noTable('"data/keys.json"') },
  {
    name: 'query()',
    sql: "SELECT * FROM query('SELECT * FROM bob.secret')",
    outcome: tableFunction('query'),
  },
  {
    name: 'query_table()',
    sql: "SELECT * FROM query_table('bob.secret')",
    outcome: tableFunction('query_table'),
  },
  {
    name: 'json_execute_serialized_sql',
    sql: "SELECT * FROM json_execute_serialized_sql('{}')",
    outcome: tableFunction('json_execute_serialized_sql'),
  },
  {
    name: 'a table macro reading a table by name',
    sql: 'SELECT * FROM histogram(bob.secret, n)',
    outcome: tableFunction('histogram'),
  },
  { name: 'duckdb_tables()', sql: 'SELECT * FROM duckdb_tables()', outcome: tableFunction('duckdb_tables') },
  {
    name: 'duckdb_settings()',
    sql: 'SELECT * FROM duckdb_settings()',
    outcome: tableFunction('duckdb_settings'),
  },
  {
    name: 'pragma_table_info()',
    sql: "SELECT * FROM pragma_table_info('bob.secret')",
    outcome: tableFunction('pragma_table_info'),
  },
  {
    name: 'a qualified table function',
    sql: 'SELECT * FROM system.main.duckdb_tables()',
    outcome: { refused: /function system\.main\.duckdb_tables is not available/ },
  },
  {
    name: 'current_setting',
    sql: "SELECT current_setting('allowed_directories')",
    outcome: fn('current_setting'),
  },
  {
    name: 'current_setting qualified',
    sql: "SELECT pg_catalog.current_setting('threads')",
    outcome: fn('pg_catalog.current_setting'),
  },
  { name: 'getvariable', sql: "SELECT getvariable('x')", outcome: fn('getvariable') },
  { name: 'getenv', sql: "SELECT getenv('HOME')", outcome: fn('getenv') },
  {
    name: 'json_serialize_plan (plans SQL text)',
    sql: "SELECT json_serialize_plan('SELECT * FROM bob.secret')",
    outcome: fn('json_serialize_plan'),
  },
  { name: 'nextval', sql: "SELECT nextval('any_sequence')", outcome: fn('nextval') },
  { name: 'sleep_ms', sql: 'SELECT sleep_ms(100000)', outcome: fn('sleep_ms') },
  { name: 'pg_sleep', sql: 'SELECT pg_sleep(100)', outcome: fn('pg_sleep') },
  { name: 'current_database', sql: 'SELECT current_database()', outcome: fn('current_database') },
  { name: 'a catalog macro', sql: 'SELECT pg_get_viewdef(1)', outcome: fn('pg_get_viewdef') },
  {
    name: 'a function hidden in a lambda',
    sql: "SELECT list_transform([1], x -> current_setting('threads'))",
    outcome: fn('current_setting'),
  },
  {
    name: 'a user type from the catalog',
    sql: "SELECT 'a'::alice.mood",
    outcome: { refused: /type alice\.mood does not exist at position \d+$/ },
  },
  {
    name: 'time travel',
    sql: 'SELECT * FROM alice.notes AT (VERSION => 1)',
    outcome: { refused: /time travel/ },
  },
  {
    name: 'information_schema',
    sql: 'SELECT * FROM information_schema.tables',
    outcome: noTable('information_schema.tables'),
  },
  { name: 'pg_catalog', sql: 'SELECT * FROM pg_catalog.pg_class', outcome: noTable('pg_catalog.pg_class') },
  {
    name: 'a catalog view without parentheses',
    sql: 'SELECT * FROM duckdb_tables',
    outcome: noTable('duckdb_tables'),
  },
  { name: 'sqlite_master', sql: 'SELECT * FROM sqlite_master', outcome: noTable('sqlite_master') },
  {
    name: 'the system catalog',
    sql: 'SELECT * FROM system.main.duckdb_settings',
    outcome: noTable('system.main.duckdb_settings'),
  },
  {
    name: 'the temp catalog',
    sql: 'SELECT * FROM temp.main.anything',
    outcome: noTable('temp.main.anything'),
  },
  {
    name: "the service's bookkeeping",
    sql: 'SELECT * FROM _service.tables',
    outcome: noTable('_service.tables'),
  },
  {
    name: "the service's bookkeeping, quoted",
    sql: 'SELECT * FROM "_service"."executions"',
    outcome: noTable('_service.executions'),
  },
  {
    name: "the service's bookkeeping under dune.",
    sql: 'SELECT * FROM dune._service.tables',
    outcome: noTable('dune._service.tables'),
  },
];

const privateTables: HostileSql[] = [
  { name: 'the private table', sql: 'SELECT * FROM bob.secret', outcome: noTable('bob.secret') },
  {
    name: 'dune. three-part name',
    sql: 'SELECT * FROM dune.bob.secret',
    outcome: noTable('dune.bob.secret'),
  },
  { name: 'quoted upper case', sql: 'SELECT * FROM "BOB"."SECRET"', outcome: noTable('BOB.SECRET') },
  { name: 'mixed quoting and case', sql: 'SeLeCt * FrOm "bob".SeCrEt', outcome: noTable('bob.SeCrEt') },
  {
    name: 'spaces and comments around the dot',
    sql: 'SELECT * FROM bob /* x */ . -- y\n secret',
    outcome: noTable('bob.secret'),
  },
  {
    name: 'behind a comment naming a public table',
    sql: 'SELECT * FROM /* alice.notes */ bob.secret',
    outcome: noTable('bob.secret'),
  },
  {
    name: 'after a line comment',
    sql: 'SELECT 1 -- FROM alice.notes\nFROM bob.secret',
    outcome: noTable('bob.secret'),
  },
  { name: 'with a trailing semicolon', sql: 'SELECT * FROM bob.secret;', outcome: noTable('bob.secret') },
  {
    name: 'a Cyrillic look-alike schema',
    sql: 'SELECT * FROM b\u043eb.secret',
    outcome: noTable('"b\u043eb".secret'),
  },
  {
    name: 'fullwidth letters',
    sql: 'SELECT * FROM \uff42\uff4f\uff42.secret',
    outcome: noTable('"\uff42\uff4f\uff42".secret'),
  },
  {
    name: 'a dotted name in one identifier',
    sql: 'SELECT * FROM "bob.secret"',
    outcome: noTable('"bob.secret"'),
  },
  { name: 'in a scalar subquery', sql: `SELECT ${SECRET}`, outcome: noTable('bob.secret') },
  {
    name: 'in IN (subquery)',
    sql: 'SELECT * FROM alice.notes WHERE n IN (SELECT n FROM bob.secret)',
    outcome: noTable('bob.secret'),
  },
  { name: 'in EXISTS', sql: 'SELECT EXISTS (SELECT 1 FROM bob.secret)', outcome: noTable('bob.secret') },
  {
    name: 'in a lateral join',
    sql: 'SELECT * FROM alice.notes, LATERAL (SELECT * FROM bob.secret)',
    outcome: noTable('bob.secret'),
  },
  {
    name: 'in a UNION',
    sql: 'SELECT * FROM alice.notes UNION ALL SELECT * FROM bob.secret',
    outcome: noTable('bob.secret'),
  },
  { name: 'in a lambda', sql: `SELECT list_transform([1], x -> ${SECRET})`, outcome: noTable('bob.secret') },
  { name: 'in a struct literal', sql: `SELECT {'a': ${SECRET}}`, outcome: noTable('bob.secret') },
  { name: 'in a list literal', sql: `SELECT [${SECRET}]`, outcome: noTable('bob.secret') },
  {
    name: 'in a PIVOT',
    sql: "SELECT * FROM (PIVOT bob.secret ON who IN ('x') USING sum(n))",
    outcome: noTable('bob.secret'),
  },
  {
    name: 'in an UNPIVOT',
    sql: 'SELECT * FROM (UNPIVOT bob.secret ON n INTO NAME k VALUE v)',
    outcome: noTable('bob.secret'),
  },
  {
    name: 'in QUALIFY',
    sql: `SELECT * FROM alice.notes QUALIFY n = ${SECRET}`,
    outcome: noTable('bob.secret'),
  },
  {
    name: 'in a window ORDER BY',
    sql: `SELECT sum(n) OVER (ORDER BY ${SECRET}) FROM alice.notes`,
    outcome: noTable('bob.secret'),
  },
  {
    name: 'in a WINDOW clause',
    sql: `SELECT sum(n) OVER w FROM alice.notes WINDOW w AS (PARTITION BY ${SECRET})`,
    outcome: noTable('bob.secret'),
  },
  {
    name: 'in COLUMNS()',
    sql: 'SELECT COLUMNS(c -> c IN (SELECT who FROM bob.secret)) FROM alice.notes',
    outcome: noTable('bob.secret'),
  },
  {
    name: 'in * REPLACE',
    sql: `SELECT * REPLACE (${SECRET} AS n) FROM alice.notes`,
    outcome: noTable('bob.secret'),
  },
  {
    name: 'in ORDER BY',
    sql: `SELECT * FROM alice.notes ORDER BY ${SECRET}`,
    outcome: noTable('bob.secret'),
  },
  { name: 'in LIMIT', sql: `SELECT * FROM alice.notes LIMIT ${SECRET}`, outcome: noTable('bob.secret') },
  {
    name: 'in an aggregate FILTER',
    sql: `SELECT count(*) FILTER (WHERE n = ${SECRET}) FROM alice.notes`,
    outcome: noTable('bob.secret'),
  },
  {
    name: 'in GROUP BY',
    sql: `SELECT count(*) FROM alice.notes GROUP BY ${SECRET}`,
    outcome: noTable('bob.secret'),
  },
  {
    name: 'in a table function argument',
    sql: `SELECT * FROM range(${SECRET})`,
    outcome: noTable('bob.secret'),
  },
  { name: 'in VALUES', sql: `SELECT * FROM (VALUES (${SECRET}))`, outcome: noTable('bob.secret') },
  { name: 'in a CASE', sql: `SELECT CASE WHEN true THEN ${SECRET} END`, outcome: noTable('bob.secret') },
  {
    name: 'in a recursive CTE anchor',
    sql: 'WITH RECURSIVE r AS (SELECT n FROM bob.secret UNION ALL SELECT n FROM r) SELECT * FROM r',
    outcome: noTable('bob.secret'),
  },
  {
    name: 'in a join condition',
    sql: `SELECT * FROM alice.notes a JOIN bob.public_t b ON a.n = ${SECRET}`,
    outcome: noTable('bob.secret'),
  },
  {
    name: 'a CTE wrapping it',
    sql: 'WITH secret AS (SELECT * FROM bob.secret) SELECT * FROM secret',
    outcome: noTable('bob.secret'),
  },
  {
    name: 'a CTE named like it (a qualified name is never a CTE)',
    sql: 'WITH secret AS (SELECT 1) SELECT * FROM bob.secret',
    outcome: noTable('bob.secret'),
  },
  {
    name: 'a CTE named like its schema',
    sql: 'WITH bob AS (SELECT 1) SELECT * FROM bob.secret',
    outcome: noTable('bob.secret'),
  },
  {
    name: 'a CTE named with a dot',
    sql: 'WITH "bob.secret" AS (SELECT 1) SELECT * FROM bob.secret',
    outcome: noTable('bob.secret'),
  },
  {
    name: 'a CTE out of its scope',
    sql: 'SELECT * FROM (WITH s AS (SELECT 1) SELECT * FROM s), s',
    outcome: noTable('s'),
  },
  {
    name: 'a CTE seen before it is defined',
    sql: 'WITH a AS (SELECT * FROM later), later AS (SELECT 1) SELECT * FROM a',
    outcome: noTable('later'),
  },
];

const sizeAndNesting: HostileSql[] = [
  {
    name: '1 MB of SQL',
    sql: `SELECT 1${' '.repeat(1_000_000)}`,
    outcome: { refused: /the SQL is 1000008 bytes long; at most 65536 bytes are accepted$/ },
  },
  {
    name: '1 MB of a valid query',
    sql: `SELECT ${Array(150_000).fill('1').join('+')}`,
    outcome: { refused: /the SQL is 300006 bytes long; at most 65536 bytes are accepted$/ },
  },
  {
    name: '10,000 nested parentheses',
    sql: `SELECT ${'('.repeat(10_000)}1${')'.repeat(10_000)}`,
    outcome: { refused: /memory exhausted/ },
  },
  {
    name: '5,000 chained additions',
    sql: `SELECT ${Array(5_000).fill('1').join('+')}`,
    outcome: { refused: /Max expression depth limit of 1000 exceeded/ },
  },
  {
    name: '300 nested subqueries',
    sql: `SELECT ${'(SELECT '.repeat(300)}1${')'.repeat(300)}`,
    outcome: { refused: /the SQL nests more than 1000 levels deep$/ },
  },
  {
    name: '600 nested function calls',
    sql: `SELECT ${'abs('.repeat(600)}1${')'.repeat(600)}`,
    outcome: { refused: /the SQL nests more than 1000 levels deep$/ },
  },
  {
    name: 'a NUL character',
    sql: 'SELECT 1\u0000; DROP TABLE alice.notes',
    outcome: { refused: /the SQL contains a NUL character$/ },
  },
  { name: 'a syntax error', sql: 'SELECT * FRM bob.secret', outcome: syntaxError },
];

/** Only running them can tell: each is accepted and its execution fails. */
const runTime: HostileSql[] = [
  {
    name: 'BIGINT overflow',
    sql: 'SELECT 9223372036854775807 + 1',
    outcome: { fails: /Overflow in addition of INT64/ },
  },
  {
    name: 'a bad cast',
    sql: "SELECT 'abc'::INTEGER",
    outcome: { fails: /Could not convert string 'abc' to INT32/ },
  },
  { name: 'error()', sql: "SELECT error('boom')", outcome: { fails: /boom/ } },
  {
    name: 'a string too large',
    sql: "SELECT repeat('x', 5000000000)",
    outcome: { fails: /Cannot create a string of size/ },
  },
];

export const HOSTILE_SQL: readonly HostileSql[] = [
  ...statementKinds,
  ...filesAndCatalog,
  ...privateTables,
  ...sizeAndNesting,
  ...runTime,
];
