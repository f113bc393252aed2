import type { Database } from './database.js';

/**
 * The service's own bookkeeping lives in schema `_service`, beside the users' namespaces
 * (handles cannot start with `_`). Each statement is idempotent, so opening a database made
 * by an older version brings it up to date.
 */
export const SERVICE_SCHEMA = '_service';

/** Users' query ids start here; the operator's query files take ids below it. */
export const FIRST_USER_QUERY_ID = 1_000_000_001;

const MIGRATIONS = [
  `CREATE SCHEMA IF NOT EXISTS ${SERVICE_SCHEMA}`,
  // One row per user table; the data itself is the DuckDB table <namespace>.<table_name>.
  `CREATE TABLE IF NOT EXISTS ${SERVICE_SCHEMA}.tables (
     namespace VARCHAR NOT NULL,
     table_name VARCHAR NOT NULL,
     description VARCHAR NOT NULL,
     is_private BOOLEAN NOT NULL,
     created_at TIMESTAMP NOT NULL,
     updated_at TIMESTAMP NOT NULL,
     row_count BIGINT NOT NULL,
     size_bytes BIGINT NOT NULL,
     -- JSON [{name, type, nullable}] for tables made from a declared schema (the create
     -- operation), whose types (int256…) say more than DuckDB's; NULL for uploads.
     declared_columns VARCHAR
   )`,
  // Executions' records; an execution's rows are the table _results.e_<id>.
  `CREATE TABLE IF NOT EXISTS ${SERVICE_SCHEMA}.executions (
     execution_id VARCHAR NOT NULL,
     query_id BIGINT NOT NULL,
     state VARCHAR NOT NULL,
     submitted_at TIMESTAMP NOT NULL,
     started_at TIMESTAMP,
     ended_at TIMESTAMP,
     cancelled_at TIMESTAMP,
     expires_at TIMESTAMP,
     error_type VARCHAR,
     error_message VARCHAR,
     columns VARCHAR,
     row_count BIGINT,
     result_bytes BIGINT
   )`,
  // Who ran it (a handle, or "operator" for the scheduler), the parameter values it ran with,
  // and whether it read a private table (then only its owner reads it).
  `ALTER TABLE ${SERVICE_SCHEMA}.executions ADD COLUMN IF NOT EXISTS owner VARCHAR`,
  `ALTER TABLE ${SERVICE_SCHEMA}.executions ADD COLUMN IF NOT EXISTS parameter_set VARCHAR`,
  `ALTER TABLE ${SERVICE_SCHEMA}.executions ADD COLUMN IF NOT EXISTS reads_private BOOLEAN`,
  // Records are appended, one row per state an execution reaches: the highest revision wins.
  `ALTER TABLE ${SERVICE_SCHEMA}.executions ADD COLUMN IF NOT EXISTS revision INTEGER`,
  'CREATE SCHEMA IF NOT EXISTS _results',
  // The key an upsert matches rows on, when declared at create: JSON ["col", …] (issue 24).
  `ALTER TABLE ${SERVICE_SCHEMA}.tables ADD COLUMN IF NOT EXISTS key_columns VARCHAR`,
  // Table versions (src/tables/table-versions.ts): the current version's number, the
  // operation that made it, and the highest number given so far (NULL: 1, a table's first).
  `ALTER TABLE ${SERVICE_SCHEMA}.tables ADD COLUMN IF NOT EXISTS version BIGINT`,
  `ALTER TABLE ${SERVICE_SCHEMA}.tables ADD COLUMN IF NOT EXISTS made_by VARCHAR`,
  `ALTER TABLE ${SERVICE_SCHEMA}.tables ADD COLUMN IF NOT EXISTS versions_made BIGINT`,
  // One row per kept version: what turns version from_version back into version `version`
  // (undo: JSON, its rows in tables named __version_… of the namespace), and the catalog's
  // record of that version (JSON).
  `CREATE TABLE IF NOT EXISTS ${SERVICE_SCHEMA}.table_versions (
     namespace VARCHAR NOT NULL,
     table_name VARCHAR NOT NULL,
     version BIGINT NOT NULL,
     from_version BIGINT NOT NULL,
     made_by VARCHAR,
     undo VARCHAR NOT NULL,
     catalog VARCHAR NOT NULL,
     created_at TIMESTAMP NOT NULL,
     superseded_at TIMESTAMP NOT NULL
   )`,
  // Users' saved queries (DESIGN §10). Ids come from a sequence, which DuckDB never rolls
  // back, so an id is never handed out twice; query files take the ids below the first.
  `CREATE SEQUENCE IF NOT EXISTS ${SERVICE_SCHEMA}.query_ids START ${FIRST_USER_QUERY_ID}`,
  `CREATE TABLE IF NOT EXISTS ${SERVICE_SCHEMA}.queries (
     query_id BIGINT NOT NULL,
     owner VARCHAR NOT NULL,
     name VARCHAR NOT NULL,
     description VARCHAR NOT NULL,
     -- JSON: ["tag", …] and [{key, type, value, enumOptions?}, …]
     tags VARCHAR NOT NULL,
     parameters VARCHAR NOT NULL,
     query_sql VARCHAR NOT NULL,
     version INTEGER NOT NULL,
     is_private BOOLEAN NOT NULL,
     is_archived BOOLEAN NOT NULL,
     created_at TIMESTAMP NOT NULL,
     updated_at TIMESTAMP NOT NULL
   )`,
  // The user's own SQL of an ad-hoc execution, on its final record only (the execution history
  // offers to run it again); saved queries' executions leave it NULL (the query holds the SQL).
  `ALTER TABLE ${SERVICE_SCHEMA}.executions ADD COLUMN IF NOT EXISTS sql_text VARCHAR`,
  // Materialized views (src/transform): a saved query's latest complete result kept as the
  // table <namespace>.<name> (recorded in _service.tables too), refreshed on a cron schedule.
  `CREATE TABLE IF NOT EXISTS ${SERVICE_SCHEMA}.materialized_views (
     namespace VARCHAR NOT NULL,
     name VARCHAR NOT NULL,
     query_id BIGINT NOT NULL,
     cron_expression VARCHAR,
     performance VARCHAR NOT NULL,
     -- Asked for at upsert; the table is private too when its query is or its result read a private table.
     requested_private BOOLEAN NOT NULL,
     expires_at TIMESTAMP,
     created_at TIMESTAMP NOT NULL,
     updated_at TIMESTAMP NOT NULL,
     next_refresh_at TIMESTAMP,
     refreshed_at TIMESTAMP,
     -- JSON ["execution id", …], newest first: the view's latest refreshes, whatever their end.
     last_execution_ids VARCHAR NOT NULL,
     last_error VARCHAR
   )`,
  // Pipelines (src/transform): one row per pipeline execution, its nodes as JSON, rewritten as
  // they progress.
  `CREATE TABLE IF NOT EXISTS ${SERVICE_SCHEMA}.pipeline_executions (
     pipeline_execution_id VARCHAR NOT NULL,
     owner VARCHAR NOT NULL,
     query_id BIGINT NOT NULL,
     status VARCHAR NOT NULL,
     submitted_at TIMESTAMP NOT NULL,
     ended_at TIMESTAMP,
     error VARCHAR,
     nodes VARCHAR NOT NULL
   )`,
];

export async function migrate(database: Database): Promise<void> {
  await database.write(async (session) => {
    for (const statement of MIGRATIONS) await session.run(statement);
  });
}
