import type { Session } from '../../../src/storage/database.js';
import { qualifiedName } from '../../../src/storage/sql.js';

/**
 * Everything users' SQL could have changed in the database, as plain data to compare before
 * and after: every table's rows (but those `skip` names), views, macros, sequences, types,
 * attached databases, and with `settings` the settings of the second wall.
 */
export async function databaseState(
  session: Session,
  options: { skip?: (schema: string, table: string) => boolean; settings?: boolean } = {},
): Promise<unknown> {
  const tables = await session.all<{ schema_name: string; table_name: string }>(
    'SELECT schema_name, table_name FROM duckdb_tables() ORDER BY ALL',
  );
  const contents: Record<string, unknown> = {};
  for (const { schema_name, table_name } of tables) {
    if (options.skip?.(schema_name, table_name)) continue;
    contents[`${schema_name}.${table_name}`] = await session.all(
      `SELECT * FROM ${qualifiedName(schema_name, table_name)} ORDER BY ALL`,
    );
  }
  return {
    contents,
    views: await session.all('SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY ALL'),
    macros: await session.all(
      "SELECT function_name FROM duckdb_functions() WHERE database_name <> 'system' ORDER BY ALL",
    ),
    sequences: await session.all('SELECT sequence_name FROM duckdb_sequences() ORDER BY ALL'),
    types: await session.all(
      "SELECT type_name FROM duckdb_types() WHERE database_name <> 'system' ORDER BY ALL",
    ),
    databases: await session.all('SELECT database_name FROM duckdb_databases() ORDER BY ALL'),
    ...(options.settings
      ? {
          settings: await session.all(
            "SELECT name, value FROM duckdb_settings() WHERE name IN ('enable_external_access', 'allowed_directories', 'lock_configuration', 'threads', 'memory_limit') ORDER BY ALL",
          ),
        }
      : {}),
  };
}
