// STUB, replaced by the `sandbox` branch (src/queries/sandbox.ts there): on merge, take
// theirs. Minimal: one statement, a query only (DuckDB's json_serialize_sql decides), table
// names through the resolver, table functions other than range/generate_series/unnest
// refused. The hostile-SQL corpus is the sandbox branch's to pass, not this stub's.
import { badRequest } from '../errors.js';
import type { Session } from '../storage/database.js';
import { quoteLiteral } from '../storage/sql.js';

export interface WrittenTableName {
  schema?: string;
  table: string;
}
export interface ReadableTable {
  qualifiedName: string;
  isPrivate: boolean;
}
export type TableResolver = (name: WrittenTableName) => Promise<ReadableTable | undefined>;
export interface SandboxedSql {
  sql: string;
  readsPrivate: boolean;
}

type Json = null | boolean | string | RawNumber | Json[] | { [key: string]: Json };

/** A JSON number kept as its text, so that the tree round-trips without losing digits. */
class RawNumber {
  constructor(readonly text: string) {}
}

function parseLossless(text: string): Json {
  let i = 0;
  const value = (): Json => {
    while (/\s/.test(text[i] ?? '')) i++;
    const c = text[i];
    if (c === '{') {
      i++;
      const object: { [key: string]: Json } = {};
      for (;;) {
        while (/\s/.test(text[i] ?? '')) i++;
        if (text[i] === '}') {
          i++;
          return object;
        }
        const key = value() as string;
        while (text[i] !== ':') i++;
        i++;
        object[key] = value();
        while (/\s/.test(text[i] ?? '')) i++;
        if (text[i] === ',') i++;
      }
    }
    if (c === '[') {
      i++;
      const array: Json[] = [];
      for (;;) {
        while (/\s/.test(text[i] ?? '')) i++;
        if (text[i] === ']') {
          i++;
          return array;
        }
        array.push(value());
        while (/\s/.test(text[i] ?? '')) i++;
        if (text[i] === ',') i++;
      }
    }
    if (c === '"') {
      const start = i;
      i++;
      while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      return JSON.parse(text.slice(start, i)) as string;
    }
    const literal = /^(true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i))?.[0] ?? '';
    i += literal.length;
    if (literal === 'true') return true;
    if (literal === 'false') return false;
    if (literal === 'null') return null;
    return new RawNumber(literal);
  };
  return value();
}

function stringify(value: Json): string {
  if (value instanceof RawNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(stringify).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${stringify(v)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

const ALLOWED_TABLE_FUNCTIONS = new Set(['range', 'generate_series', 'unnest']);

const noSuchTable = (name: string) => badRequest(`Catalog Error: Table with name ${name} does not exist!`);

export async function sandboxSql(
  session: Session,
  sql: string,
  resolve: TableResolver,
): Promise<SandboxedSql> {
  const [row] = await session.all<{ tree: string }>(
    `SELECT json_serialize_sql(${quoteLiteral(sql)}) AS tree`,
  );
  const tree = parseLossless(row?.tree ?? '{}') as { [key: string]: Json };
  if (tree.error === true) {
    const message = String(tree.error_message ?? 'the SQL could not be read');
    throw badRequest(
      message.includes('Only SELECT') ? 'only a query (SELECT, WITH, VALUES) may run here' : message,
    );
  }
  const statements = tree.statements as Json[];
  if (statements.length !== 1) throw badRequest('exactly one statement may run here');
  let readsPrivate = false;
  const walk = async (node: Json, ctes: ReadonlySet<string>): Promise<void> => {
    if (Array.isArray(node)) {
      for (const item of node) await walk(item, ctes);
      return;
    }
    if (node === null || typeof node !== 'object' || node instanceof RawNumber) return;
    let scope = ctes;
    const map = (node.cte_map as { map?: { key: string }[] } | undefined)?.map;
    if (Array.isArray(map) && map.length > 0)
      scope = new Set([...ctes, ...map.map((entry) => String(entry.key).toLowerCase())]);
    if (node.type === 'BASE_TABLE') {
      let schema = String(node.schema_name ?? '') || undefined;
      const catalog = String(node.catalog_name ?? '');
      const table = String(node.table_name);
      if (catalog && catalog.toLowerCase() !== 'dune') throw noSuchTable(`${catalog}.${schema}.${table}`);
      if (!catalog && schema?.toLowerCase() === 'dune') schema = undefined;
      if (!schema && scope.has(table.toLowerCase())) return;
      const readable = await resolve({ ...(schema ? { schema } : {}), table });
      if (!readable) throw noSuchTable(schema ? `${schema}.${table}` : table);
      readsPrivate ||= readable.isPrivate;
      const [qualifiedSchema = '', qualifiedTable = ''] = readable.qualifiedName
        .slice(1, -1)
        .split('"."')
        .map((part) => part.replaceAll('""', '"'));
      node.catalog_name = '';
      node.schema_name = qualifiedSchema;
      node.table_name = qualifiedTable;
      return;
    }
    if (node.type === 'TABLE_FUNCTION') {
      const fn = node.function as { function_name?: string } | undefined;
      if (!ALLOWED_TABLE_FUNCTIONS.has(String(fn?.function_name ?? '').toLowerCase()))
        throw badRequest(`table function ${String(fn?.function_name)} may not be used here`);
    }
    for (const value of Object.values(node)) await walk(value, scope);
  };
  await walk(statements, new Set());
  const [written] = await session.all<{ sql: string }>(
    `SELECT json_deserialize_sql(${quoteLiteral(stringify(tree))}) AS sql`,
  );
  return { sql: written?.sql ?? '', readsPrivate };
}
