import { badRequest } from '../errors.js';
import type { Session } from '../storage/database.js';
import { qualifiedName, quoteIdentifier } from '../storage/sql.js';

/**
 * Declared table schemas (the create operation, and the restaking source tables): the
 * column types clients name, and how each is stored in DuckDB. int256 and uint256 are
 * DuckDB's arbitrary-precision BIGNUM with a range check, so values beyond 64 or 128 bits
 * are kept exactly and out-of-range values are refused by the database itself.
 */

export const DECLARED_TYPES = [
  'varchar',
  'integer',
  'bigint',
  'double',
  'boolean',
  'date',
  'timestamp',
  'varbinary',
  'int256',
  'uint256',
] as const;
export type DeclaredType = (typeof DECLARED_TYPES)[number];

export interface DeclaredColumn {
  name: string;
  type: DeclaredType;
  nullable: boolean;
}

const TWO_255 = (2n ** 255n).toString();
const TWO_256 = (2n ** 256n).toString();

const STORAGE_TYPES: Record<DeclaredType, string> = {
  varchar: 'VARCHAR',
  integer: 'INTEGER',
  bigint: 'BIGINT',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
  date: 'DATE',
  timestamp: 'TIMESTAMP',
  varbinary: 'BLOB',
  int256: 'BIGNUM',
  uint256: 'BIGNUM',
};

/** The inclusive-exclusive range of a 256-bit type, as BIGNUM literals. */
export const INTEGER_256_RANGE: Record<'int256' | 'uint256', { min: string; maxExclusive: string }> = {
  int256: { min: `-${TWO_255}`, maxExclusive: TWO_255 },
  uint256: { min: '0', maxExclusive: TWO_256 },
};

export function storageType(type: DeclaredType): string {
  return STORAGE_TYPES[type];
}

export function isDeclaredType(type: string): type is DeclaredType {
  return (DECLARED_TYPES as readonly string[]).includes(type);
}

/** The column's definition in CREATE TABLE, range check included. */
export function columnDefinition(column: DeclaredColumn): string {
  const name = quoteIdentifier(column.name);
  let definition = `${name} ${storageType(column.type)}`;
  if (!column.nullable) definition += ' NOT NULL';
  if (column.type === 'int256' || column.type === 'uint256') {
    const range = INTEGER_256_RANGE[column.type];
    definition += ` CHECK (${name} >= '${range.min}'::BIGNUM AND ${name} < '${range.maxExclusive}'::BIGNUM)`;
  }
  return definition;
}

/** Checks a client's schema: names as for uploads, known types, at least one column. */
export function validateSchema(schema: unknown): DeclaredColumn[] {
  if (!Array.isArray(schema) || schema.length === 0) {
    throw badRequest('field "schema" must be a non-empty array of {name, type, nullable}');
  }
  const seen = new Set<string>();
  return schema.map((entry: unknown, i) => {
    const column = entry as { name?: unknown; type?: unknown; nullable?: unknown };
    if (typeof column !== 'object' || column === null) throw badRequest(`schema[${i}] must be an object`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing exactly those
    if (typeof column.name !== 'string' || !/^[\p{L}_][^\u0000-\u001f]{0,254}$/u.test(column.name)) {
      throw badRequest(
        `schema[${i}].name must be a string starting with a letter or _ (at most 255 characters)`,
      );
    }
    const folded = column.name.toLowerCase();
    if (seen.has(folded))
      throw badRequest(`schema[${i}].name "${column.name}" repeats a column name (ignoring case)`);
    seen.add(folded);
    const type = typeof column.type === 'string' ? column.type.toLowerCase() : undefined;
    if (!type || !isDeclaredType(type)) {
      throw badRequest(`schema[${i}].type must be one of ${DECLARED_TYPES.join(', ')}`);
    }
    if (column.nullable !== undefined && typeof column.nullable !== 'boolean') {
      throw badRequest(`schema[${i}].nullable must be true or false`);
    }
    return { name: column.name, type, nullable: column.nullable ?? true };
  });
}

/** Creates (or replaces) a table from a declared schema, in the caller's transaction. */
export async function createDeclaredTable(
  session: Session,
  namespace: string,
  table: string,
  columns: readonly DeclaredColumn[],
  options: { replace?: boolean } = {},
): Promise<void> {
  await session.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(namespace)}`);
  const create = options.replace ? 'CREATE OR REPLACE TABLE' : 'CREATE TABLE';
  await session.run(
    `${create} ${qualifiedName(namespace, table)} (${columns.map(columnDefinition).join(', ')})`,
  );
}
