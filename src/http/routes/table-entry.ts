import type { TableListing } from '../../tables/table-catalog.js';

/** A table as the list and describe operations answer it (DESIGN §4). */
export function listEntry(table: TableListing) {
  return {
    full_name: `${table.namespace}.${table.tableName}`,
    namespace: table.namespace,
    table_name: table.tableName,
    description: table.description,
    is_private: table.isPrivate,
    row_count: table.rowCount,
    table_size_bytes: String(table.sizeBytes),
    created_at: table.createdAt.toISOString(),
    updated_at: table.updatedAt.toISOString(),
    owner: { handle: table.namespace, type: 'user' },
    columns: table.columns,
  };
}
