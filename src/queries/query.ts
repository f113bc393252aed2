import { OPERATOR } from '../executions/execution.js';
import { parameterToApi, type QueryParameter } from './parameters.js';
import type { QueryFile } from './query-files.js';

/**
 * A query as the API shows it (DESIGN §10): a user's saved query, stored in the database,
 * or one of the operator's query files, which reads back as a public query owned by the
 * operator and cannot be changed through the API.
 */
export interface Query {
  id: number;
  /** `user`: saved through the API; `file`: the operator's query file. */
  source: 'user' | 'file';
  owner: string;
  name: string;
  description: string;
  tags: string[];
  parameters: QueryParameter[];
  sql: string;
  version: number;
  isPrivate: boolean;
  isArchived: boolean;
  /** Users' queries only: the operator's files have no such record. */
  createdAt?: Date;
  updatedAt?: Date;
}

export function queryFromFile(file: QueryFile): Query {
  return {
    id: file.id,
    source: 'file',
    owner: OPERATOR,
    name: file.name,
    description: file.description,
    tags: [],
    parameters: [],
    sql: file.sql,
    version: 1,
    isPrivate: false,
    isArchived: false,
  };
}

/** The query object of the mirrored API: every field the official clients read. */
export function queryToApi(query: Query): Record<string, unknown> {
  return {
    query_id: query.id,
    name: query.name,
    description: query.description,
    tags: query.tags,
    version: query.version,
    parameters: query.parameters.map(parameterToApi),
    query_engine: 'medium',
    query_sql: query.sql,
    is_private: query.isPrivate,
    is_archived: query.isArchived,
    is_unsaved: false,
    owner: query.owner,
  };
}

/**
 * A query in a list (GET /v1/queries): Dune's overview fields (`id`, `name`, `description`,
 * `owner`, `tags`, `created_at`, `updated_at`) beside the whole query object, which the
 * workspace reads.
 */
export function queryOverviewToApi(query: Query): Record<string, unknown> {
  return {
    id: query.id,
    ...queryToApi(query),
    created_at: query.createdAt?.toISOString() ?? null,
    updated_at: query.updatedAt?.toISOString() ?? null,
  };
}
