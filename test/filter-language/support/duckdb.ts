import { type DuckDBConnection, DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import type { SqlParam } from '../../../src/filter-language/index.js';

/** An in-memory DuckDB for one test file: one instance, one connection, closed explicitly. */
export interface TestDatabase {
  connection: DuckDBConnection;
  rows(sql: string, params?: readonly SqlParam[]): Promise<Record<string, unknown>[]>;
  close(): void;
}

export async function openDatabase(): Promise<TestDatabase> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  return {
    connection,
    async rows(sql, params = []) {
      const reader = await connection.runAndReadAll(sql, params as DuckDBValue[]);
      return reader.getRowObjectsJS() as Record<string, unknown>[];
    },
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}
