import type { Database } from './database.js';

/**
 * The service's own bookkeeping lives in schema `_service`, beside the users' namespaces
 * (handles cannot start with `_`). Each statement is idempotent, so opening a database made
 * by an older version brings it up to date.
 */
export const SERVICE_SCHEMA = '_service';

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
];

export async function migrate(database: Database): Promise<void> {
  await database.write(async (session) => {
    for (const statement of MIGRATIONS) await session.run(statement);
  });
}
