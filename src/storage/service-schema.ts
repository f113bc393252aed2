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
];

export async function migrate(database: Database): Promise<void> {
  await database.write(async (session) => {
    for (const statement of MIGRATIONS) await session.run(statement);
  });
}
