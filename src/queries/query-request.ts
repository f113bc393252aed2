import { badRequest } from '../errors.js';
import { parseParameterList, parseParameterMap, type QueryParameter } from './parameters.js';

/**
 * The bodies of the query endpoints, checked once into typed requests (DESIGN §10). The
 * official clients send exactly these fields; anything else is a 400 naming it, so that a
 * typo never passes as "no change".
 */

const MAX_NAME_CHARS = 500;
const MAX_DESCRIPTION_CHARS = 10_000;
const MAX_TAGS = 50;
const MAX_TAG_CHARS = 100;

export type Performance = 'medium' | 'large';

type Body = Record<string, unknown>;

const show = (value: unknown) => JSON.stringify(value)?.slice(0, 80) ?? String(value);

function object(body: unknown): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badRequest('the body must be a JSON object');
  return body as Body;
}

function onlyFields(body: Body, allowed: readonly string[], hint = ''): void {
  const unknown = Object.keys(body).find((k) => !allowed.includes(k));
  if (unknown !== undefined)
    throw badRequest(`unknown field ${show(unknown)}; this operation takes ${allowed.join(', ')}${hint}`);
}

function text(body: Body, field: string, max: number, required: boolean): string | undefined {
  const value = body[field];
  if (value === undefined || (value === null && !required)) {
    if (required) throw badRequest(`field "${field}" is required`);
    return undefined;
  }
  if (typeof value !== 'string') throw badRequest(`field "${field}" must be a string`);
  if (value.length > max) throw badRequest(`field "${field}" is longer than ${max} characters`);
  if (value.includes('\u0000')) throw badRequest(`field "${field}" contains a NUL character`);
  return value;
}

/**
 * SQL text: a string, not blank. Its length and characters are the sandbox's to judge
 * (sandboxSql: at most MAX_SQL_BYTES, no NUL), with the same words wherever SQL comes in.
 */
export function checkSql(value: unknown, field: string): string {
  if (value === undefined || value === null) throw badRequest(`field "${field}" is required`);
  if (typeof value !== 'string') throw badRequest(`field "${field}" must be a string`);
  if (value.trim() === '') throw badRequest(`field "${field}" is empty`);
  return value;
}

function name(body: Body, required: boolean): string | undefined {
  const value = text(body, 'name', MAX_NAME_CHARS, required);
  if (value !== undefined && value.trim() === '') throw badRequest('field "name" is empty');
  return value;
}

function tags(body: Body): string[] | undefined {
  const value = body.tags;
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length > MAX_TAGS)
    throw badRequest(`field "tags" must be a list of at most ${MAX_TAGS} strings`);
  return value.map((tag, i) => {
    if (typeof tag !== 'string' || tag === '' || tag.length > MAX_TAG_CHARS || /\p{Cc}/u.test(tag))
      throw badRequest(
        `tags[${i}] must be a string of 1 to ${MAX_TAG_CHARS} characters without control characters`,
      );
    return tag;
  });
}

function flag(body: Body, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw badRequest(`field "${field}" must be true or false`);
  return value;
}

/** `{[]: none}`: whether a parameters field was sent empty. */
const isEmpty = (value: unknown) =>
  (Array.isArray(value) && value.length === 0) ||
  (typeof value === 'object' && value !== null && Object.keys(value).length === 0);

/**
 * Parameter declarations in either form: `parameters` (a list, the Python client) or
 * `query_parameters` (a map, the TypeScript client). Given `declared`, the map keeps their
 * types. Undefined when neither field was sent.
 */
function parameters(body: Body): ((declared: readonly QueryParameter[]) => QueryParameter[]) | undefined {
  const list = body.parameters ?? undefined;
  // The TypeScript client sends `[]` for "none" in the map's place.
  const map =
    Array.isArray(body.query_parameters) && isEmpty(body.query_parameters)
      ? {}
      : (body.query_parameters ?? undefined);
  if (list !== undefined && map !== undefined) {
    if (!isEmpty(list) && !isEmpty(map))
      throw badRequest(
        'send parameters in one form: "parameters" (a list) or "query_parameters" (an object)',
      );
    if (isEmpty(list) && isEmpty(map)) return () => [];
  }
  if (list !== undefined && !isEmpty(list)) return () => parseParameterList(list, 'parameters');
  if (map !== undefined && !isEmpty(map))
    return (declared) => parseParameterMap(map, 'query_parameters', declared);
  if (list !== undefined) return () => parseParameterList(list, 'parameters');
  if (map !== undefined) return (declared) => parseParameterMap(map, 'query_parameters', declared);
  return undefined;
}

export interface CreateQueryRequest {
  name: string;
  sql: string;
  description: string;
  tags: string[];
  isPrivate: boolean;
  parameters: QueryParameter[];
}

const CREATE_FIELDS = [
  'name',
  'query_sql',
  'description',
  'tags',
  'is_private',
  'parameters',
  'query_parameters',
];

export function parseCreateQuery(raw: unknown): CreateQueryRequest {
  const body = object(raw);
  onlyFields(body, CREATE_FIELDS);
  return {
    name: name(body, true) as string,
    sql: checkSql(body.query_sql, 'query_sql'),
    description: text(body, 'description', MAX_DESCRIPTION_CHARS, false) ?? '',
    tags: tags(body) ?? [],
    isPrivate: flag(body, 'is_private') ?? false,
    parameters: parameters(body)?.([]) ?? [],
  };
}

export interface UpdateQueryRequest {
  name?: string;
  sql?: string;
  description?: string;
  tags?: string[];
  /** The new declarations, given the current ones (the map form keeps their types). */
  parameters?: (declared: readonly QueryParameter[]) => QueryParameter[];
}

const UPDATE_FIELDS = ['name', 'query_sql', 'description', 'tags', 'parameters', 'query_parameters'];

export function parseUpdateQuery(raw: unknown): UpdateQueryRequest {
  const body = object(raw);
  onlyFields(
    body,
    UPDATE_FIELDS,
    '; privacy and archiving have their own paths (/private, /unprivate, /archive, /unarchive)',
  );
  const request: UpdateQueryRequest = {};
  const newName = name(body, false);
  if (newName !== undefined) request.name = newName;
  if (body.query_sql !== undefined && body.query_sql !== null)
    request.sql = checkSql(body.query_sql, 'query_sql');
  const description = text(body, 'description', MAX_DESCRIPTION_CHARS, false);
  if (description !== undefined) request.description = description;
  const newTags = tags(body);
  if (newTags !== undefined) request.tags = newTags;
  const newParameters = parameters(body);
  if (newParameters !== undefined) request.parameters = newParameters;
  return request;
}

function performance(body: Body): Performance {
  const value = body.performance;
  if (value === undefined || value === null) return 'medium';
  if (value !== 'medium' && value !== 'large')
    throw badRequest(`field "performance" must be "medium" or "large", got ${show(value)}`);
  return value;
}

export interface ExecuteQueryRequest {
  /** Values given for the run, by parameter name (checked against the query later). */
  values: Map<string, unknown>;
  performance: Performance;
}

/** `{query_parameters: {name: value}, performance}`, both optional; an empty body too. */
export function parseExecuteQuery(raw: unknown): ExecuteQueryRequest {
  if (raw === undefined) return { values: new Map(), performance: 'medium' };
  const body = object(raw);
  onlyFields(body, ['query_parameters', 'performance']);
  const given = body.query_parameters;
  let values = new Map<string, unknown>();
  if (given !== undefined && given !== null && !(Array.isArray(given) && given.length === 0)) {
    if (typeof given !== 'object' || Array.isArray(given))
      throw badRequest('field "query_parameters" must be an object {name: value}');
    values = new Map(Object.entries(given as Body));
  }
  return { values, performance: performance(body) };
}

export interface ExecuteSqlRequest {
  sql: string;
  performance: Performance;
}

export function parseExecuteSql(raw: unknown): ExecuteSqlRequest {
  const body = object(raw);
  onlyFields(body, ['sql', 'performance']);
  return { sql: checkSql(body.sql, 'sql'), performance: performance(body) };
}
