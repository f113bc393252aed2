import { badRequest } from '../errors.js';
import { type InferredType, parseTypeName, TYPE_NAMES } from './csv-column-types.js';
import { validateTableName } from './table-name.js';

/**
 * What an upload asks for besides its data: the JSON form's fields (`table_name`,
 * `description`, `is_private`, and `strict`, `types`, `dry_run`), or the same names as query
 * parameters when the body is the file itself (text/csv, NDJSON, Parquet).
 */
export interface UploadOptions {
  tableName: string;
  description: string;
  isPrivate: boolean;
  /** Refuse the upload rather than widen a column to text. */
  strict: boolean;
  /** Column types the client gives, by column name as in the header. */
  types: ReadonlyMap<string, InferredType>;
  /** Type and check everything, answer as for a store, store nothing. */
  dryRun: boolean;
}

/** The query parameters of an upload whose body is the file. */
export const UPLOAD_QUERY_PARAMETERS = [
  'table_name',
  'description',
  'is_private',
  'strict',
  'types',
  'dry_run',
];

function readTypes(value: unknown, where: string): Map<string, InferredType> {
  if (value === undefined) return new Map();
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badRequest(
      `${where} "types" must be an object of column names and types, e.g. {"amount": "decimal(38,18)"}`,
    );
  }
  const types = new Map<string, InferredType>();
  for (const [column, name] of Object.entries(value)) {
    const type = typeof name === 'string' ? parseTypeName(name) : undefined;
    if (!type) {
      throw badRequest(
        `${where} "types": ${JSON.stringify(column)} has type ${JSON.stringify(name)}; the types are ${TYPE_NAMES}`,
      );
    }
    types.set(column, type);
  }
  return types;
}

function readBoolean(value: unknown, name: string, where: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw badRequest(`${where} "${name}" must be true or false`);
  return value;
}

/** The options of the JSON form, from its fields other than `data`. */
export function uploadOptionsFromFields(fields: ReadonlyMap<string, unknown>): UploadOptions {
  if (!fields.has('table_name')) throw badRequest('field "table_name" is required');
  const tableName = validateTableName(fields.get('table_name'));
  const description = fields.get('description') ?? '';
  if (typeof description !== 'string') throw badRequest('field "description" must be a string');
  return {
    tableName,
    description,
    isPrivate: readBoolean(fields.get('is_private'), 'is_private', 'field'),
    strict: readBoolean(fields.get('strict'), 'strict', 'field'),
    types: readTypes(fields.get('types'), 'field'),
    dryRun: readBoolean(fields.get('dry_run'), 'dry_run', 'field'),
  };
}

function queryBoolean(params: ReadonlyMap<string, string>, name: string): boolean {
  const value = params.get(name);
  if (value === undefined) return false;
  if (value !== 'true' && value !== 'false') {
    throw badRequest(`query parameter "${name}" must be true or false, got ${JSON.stringify(value)}`);
  }
  return value === 'true';
}

/** The options of an upload whose body is the file, from its query parameters. */
export function uploadOptionsFromQuery(params: ReadonlyMap<string, string>): UploadOptions {
  if (!params.has('table_name')) {
    throw badRequest(
      'query parameter "table_name" is required when the body is the file itself: /v1/table/upload/csv?table_name=trades',
    );
  }
  const types = params.get('types');
  let parsedTypes: unknown;
  if (types !== undefined) {
    try {
      parsedTypes = JSON.parse(types);
    } catch {
      throw badRequest('query parameter "types" must be a JSON object such as {"amount":"decimal(38,18)"}');
    }
  }
  return {
    tableName: validateTableName(params.get('table_name')),
    description: params.get('description') ?? '',
    isPrivate: queryBoolean(params, 'is_private'),
    strict: queryBoolean(params, 'strict'),
    types: readTypes(parsedTypes, 'query parameter'),
    dryRun: queryBoolean(params, 'dry_run'),
  };
}

/** `types` by column index of `columns`; a name that is not a column is a 400. */
export function pinnedTypes(
  types: ReadonlyMap<string, InferredType>,
  columns: readonly string[],
): Map<number, InferredType> {
  const pinned = new Map<number, InferredType>();
  for (const [name, type] of types) {
    const index = columns.indexOf(name);
    if (index < 0) {
      throw badRequest(
        `"types" names ${JSON.stringify(name)}, which is not a column; the columns are ${columns.join(', ')}`,
      );
    }
    pinned.set(index, type);
  }
  return pinned;
}
