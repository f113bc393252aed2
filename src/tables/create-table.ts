import type { Account } from '../auth/account.js';
import { badRequest, conflict, forbidden } from '../errors.js';
import type { Database, Session } from '../storage/database.js';
import { assertCanWrite, fullName, type TableRef, validateNamespace } from './table-access.js';
import { findTable, saveTable } from './table-catalog.js';
import { validateTableName } from './table-name.js';
import { createDeclaredTable, type DeclaredColumn, validateSchema } from './table-schema.js';
import { validateKey } from './upsert-rows.js';

/**
 * The create operation (DESIGN §4): an empty table from a declared schema. Creating a
 * table that already exists with the same schema succeeds without change, so a client can
 * run its set-up on every start; a different schema is a conflict, never a silent change.
 */

export interface CreateTableRequest extends TableRef {
  columns: DeclaredColumn[];
  description: string;
  isPrivate: boolean;
  /** The columns upserts match rows on; undefined when not declared. */
  key?: string[];
}

export interface CreateTableOutcome extends TableRef {
  alreadyExisted: boolean;
}

/** The JSON body `{namespace, table_name, schema, description?, is_private?}`, checked. */
export function readCreateRequest(body: unknown): CreateTableRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest(
      'the body must be a JSON object: {namespace, table_name, schema, description, is_private}',
    );
  }
  const fields = body as Record<string, unknown>;
  if (fields.namespace === undefined) throw badRequest('field "namespace" is required');
  if (fields.table_name === undefined) throw badRequest('field "table_name" is required');
  if (fields.schema === undefined) throw badRequest('field "schema" is required');
  const description = fields.description ?? '';
  if (typeof description !== 'string') throw badRequest('field "description" must be a string');
  const isPrivate = fields.is_private ?? false;
  if (typeof isPrivate !== 'boolean') throw badRequest('field "is_private" must be true or false');
  const columns = validateSchema(fields.schema);
  const key = fields.key === undefined ? undefined : validateKey(fields.key, columns, 'field "key"');
  return {
    namespace: validateNamespace(fields.namespace),
    tableName: validateTableName(fields.table_name),
    columns,
    description,
    isPrivate,
    ...(key ? { key } : {}),
  };
}

function sameSchema(a: readonly DeclaredColumn[], b: readonly DeclaredColumn[]): boolean {
  return (
    a.length === b.length &&
    a.every((column, i) => {
      const other = b[i] as DeclaredColumn;
      return column.name === other.name && column.type === other.type && column.nullable === other.nullable;
    })
  );
}

function describeSchema(columns: readonly DeclaredColumn[]): string {
  return columns.map((c) => `${c.name} ${c.type}${c.nullable ? '' : ' not null'}`).join(', ');
}

/** Whether DuckDB holds a table of that name that the catalog does not know. */
async function existsOutsideCatalog(session: Session, ref: TableRef): Promise<boolean> {
  const rows = await session.all(
    'SELECT 1 FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = ? AND table_name = ?',
    [ref.namespace, ref.tableName],
  );
  return rows.length > 0;
}

export async function createTable(
  database: Database,
  account: Account,
  request: CreateTableRequest,
): Promise<CreateTableOutcome> {
  assertCanWrite(account, request.namespace);
  if (request.isPrivate && account.plan !== 'premium') {
    throw forbidden('private tables need a premium plan; create with "is_private": false or upgrade the key');
  }
  const ref = { namespace: request.namespace, tableName: request.tableName };
  return database.write(async (session) => {
    const existing = await findTable(session, ref.namespace, ref.tableName);
    if (existing) {
      const sameKey =
        !request.key || JSON.stringify(request.key) === JSON.stringify(existing.keyColumns ?? []);
      if (existing.declaredColumns && sameSchema(existing.declaredColumns, request.columns) && sameKey) {
        return { ...ref, alreadyExisted: true };
      }
      if (existing.declaredColumns && sameSchema(existing.declaredColumns, request.columns)) {
        throw conflict(
          `table ${fullName(ref)} already exists with ${existing.keyColumns ? `the key ${existing.keyColumns.join(', ')}` : 'no key'}; delete it first or choose another name`,
        );
      }
      throw conflict(
        existing.declaredColumns
          ? `table ${fullName(ref)} already exists with a different schema (${describeSchema(existing.declaredColumns)}); delete it first or choose another name`
          : `table ${fullName(ref)} already exists as a CSV upload; delete it first or choose another name`,
      );
    }
    if (await existsOutsideCatalog(session, ref)) {
      throw conflict(`a table named ${fullName(ref)} already exists; choose another name`);
    }
    await createDeclaredTable(session, ref.namespace, ref.tableName, request.columns);
    await saveTable(session, {
      ...ref,
      description: request.description,
      isPrivate: request.isPrivate,
      updatedAt: new Date(),
      rowCount: 0,
      sizeBytes: 0,
      declaredColumns: request.columns,
      ...(request.key ? { keyColumns: request.key } : {}),
      version: 1,
      madeBy: 'create',
      versionsMade: 1,
    });
    return { ...ref, alreadyExisted: false };
  });
}
