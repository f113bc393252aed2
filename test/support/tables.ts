import { expect } from 'vitest';
import type { TestService } from './service.js';

/** Calls of the table operations, for the tests of test/http/table-*.test.ts. */

export interface SchemaColumn {
  name: string;
  type: string;
  nullable?: boolean;
}

/** One column of every declared type. */
export const ALL_TYPES: SchemaColumn[] = [
  { name: 'id', type: 'bigint', nullable: false },
  { name: 'label', type: 'varchar' },
  { name: 'n', type: 'integer' },
  { name: 'ratio', type: 'double' },
  { name: 'flag', type: 'boolean' },
  { name: 'day', type: 'date' },
  { name: 'at', type: 'timestamp' },
  { name: 'payload', type: 'varbinary' },
  { name: 'delta', type: 'int256' },
  { name: 'balance', type: 'uint256' },
];

export type Answer<T = Record<string, unknown>> = { status: number; body: T & { error?: string } };

export function tableCalls(service: TestService) {
  const create = (key: string, body: unknown, path = '/v1/table/create'): Promise<Answer> =>
    service.json(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      key,
    });

  const insert = (
    key: string,
    table: string,
    body: string | Buffer,
    contentType: string | null = 'text/csv',
    base = '/v1/table',
  ): Promise<Answer> =>
    service.json(`${base}/${table.replace('.', '/')}/insert`, {
      method: 'POST',
      headers: contentType === null ? {} : { 'content-type': contentType },
      body,
      key,
    });

  const clear = (key: string, table: string, base = '/v1/table'): Promise<Answer> =>
    service.json(`${base}/${table.replace('.', '/')}/clear`, { method: 'POST', key });

  const remove = (key: string, table: string, base = '/v1/table'): Promise<Answer> =>
    service.json(`${base}/${table.replace('.', '/')}`, { method: 'DELETE', key });

  const describe = (key: string, table: string, base = '/v1/table'): Promise<Answer> =>
    service.json(`${base}/${table.replace('.', '/')}`, { key });

  /** Creates a table and fails the test unless it was new. */
  const createTable = async (key: string, table: string, schema: SchemaColumn[], extra: object = {}) => {
    const [namespace, tableName] = table.split('.');
    const answer = await create(key, { namespace, table_name: tableName, schema, ...extra });
    expect(answer, JSON.stringify(answer.body)).toMatchObject({ status: 201 });
    return answer;
  };

  /** The stored rows, read directly from DuckDB: the ground truth. `select` may cast. */
  const rows = (table: string, select = '*', orderBy = '') =>
    service.database.read((session) =>
      session.all(`SELECT ${select} FROM ${table}${orderBy ? ` ORDER BY ${orderBy}` : ''}`),
    );

  const count = async (table: string) => {
    const [row] = await service.database.read((session) =>
      session.all<{ n: bigint }>(`SELECT count(*) AS n FROM ${table}`),
    );
    return Number(row?.n);
  };

  return { create, insert, clear, remove, describe, createTable, rows, count };
}
