import type { Account } from '../auth/account.js';
import { isTreeObject, type TreeObject, type TreeValue } from '../queries/sandbox/parse-tree.js';
import { callerTableName, isCatalogRelation, PER_CALLER, SHARED_SCHEMA } from './catalog-database.js';
import { CALLER_FUNCTIONS } from './catalog-functions.js';
import type { SessionSettings } from './session-settings.js';
import { VERSION_TEXT } from './session-settings.js';
import { SQLSTATE, WireError } from './sql-errors.js';
import { type Token, tokens } from './sql-text.js';

/**
 * A client's catalog query as the catalog database runs it (catalog-queries.ts decides which
 * queries are): DuckDB's parse tree, every relation pointed at the caller's schema or the
 * shared ones, PostgreSQL's syntax DuckDB lacks written as DuckDB's, the session's values as
 * constants. What a query names is surveyed first, from the same tree.
 */

export interface CatalogCaller {
  account: Account;
  settings: SessionSettings;
  processId: number;
}

/** Functions whose call makes a query without tables a catalog query. */
const CATALOG_FUNCTIONS = new Set([
  'version',
  'current_database',
  'current_catalog',
  'current_schema',
  'current_schemas',
  'current_user',
  'session_user',
  'current_setting',
  'pg_backend_pid',
  'inet_server_addr',
  'inet_server_port',
  'inet_client_addr',
  'inet_client_port',
  'pg_postmaster_start_time',
  'txid_current',
  'obj_description',
  'col_description',
  'format_type',
  'to_regclass',
  'quote_ident',
  'shobj_description',
]);

/** Words a client writes bare that PostgreSQL reads as session values. */
const SESSION_WORDS = new Set([
  'current_user',
  'session_user',
  'user',
  'current_role',
  'current_catalog',
  'current_schema',
]);

/** Casts to these PostgreSQL types are lookups (the caller's for the first three). */
const LOOKUP_CASTS: Record<string, { caller: boolean; macro: string }> = {
  regclass: { caller: true, macro: 'pgw_regclass' },
  regnamespace: { caller: true, macro: 'pgw_regnamespace' },
  regrole: { caller: true, macro: 'pgw_regrole' },
  regtype: { caller: false, macro: 'pgw_regtype' },
};

/** Set-returning functions a catalog query may read from. */
const TABLE_FUNCTIONS = new Set(['unnest', 'generate_series', 'range']);

const processStart = new Date().toISOString().replace('T', ' ').replace('Z', '+00');

export interface Templates {
  constant: TreeObject;
  call: TreeObject;
  not: TreeObject;
}

const clone = <T extends TreeValue>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export const lowerOf = (value: TreeValue | undefined) =>
  typeof value === 'string' ? value.toLowerCase() : '';

/** What a query names: catalog relations, other tables, catalog functions, its CTEs. */
export function survey(root: TreeValue): {
  catalog: boolean;
  other: boolean;
  calls: boolean;
  ctes: Set<string>;
} {
  const ctes = new Set<string>();
  const found = { catalog: false, other: false, calls: false, ctes };
  const tables: TreeObject[] = [];
  const visit = (value: TreeValue): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (!isTreeObject(value)) return;
    const cteMap = value.cte_map;
    if (isTreeObject(cteMap) && Array.isArray(cteMap.map))
      for (const entry of cteMap.map) if (isTreeObject(entry)) ctes.add(lowerOf(entry.key));
    if (value.type === 'BASE_TABLE') tables.push(value);
    if (value.type === 'TABLE_FUNCTION' && isTreeObject(value.function)) {
      if (!TABLE_FUNCTIONS.has(lowerOf(value.function.function_name))) found.other = true;
    }
    if (value.class === 'FUNCTION') {
      const name = lowerOf(value.function_name);
      const schema = lowerOf(value.schema);
      if (
        CATALOG_FUNCTIONS.has(name) ||
        name.startsWith('pg_') ||
        name.startsWith('has_') ||
        schema === 'pg_catalog'
      )
        found.calls = true;
    }
    if (value.class === 'COLUMN_REF' && Array.isArray(value.column_names) && value.column_names.length === 1)
      if (SESSION_WORDS.has(lowerOf(value.column_names[0]))) found.calls = true;
    if (value.class === 'CAST' && isTreeObject(value.cast_type) && isTreeObject(value.cast_type.type_info))
      if (lowerOf(value.cast_type.type_info.name) in LOOKUP_CASTS) found.calls = true;
    for (const key in value) visit(value[key] as TreeValue);
  };
  visit(root);
  for (const table of tables) {
    const catalog = lowerOf(table.catalog_name);
    const schema = lowerOf(table.schema_name);
    const name = lowerOf(table.table_name);
    if (catalog !== '' && catalog !== 'dune') found.other = true;
    else if (schema === 'pg_catalog' || schema === 'information_schema') found.catalog = true;
    else if (schema === '' && (ctes.has(name) || isCatalogRelation('pg_catalog', name))) {
      if (!ctes.has(name)) found.catalog = true;
    } else found.other = true;
  }
  return found;
}

/** The tree rewritten for the catalog database and this caller. */
export class Rewrite {
  private readonly searchPath: string[];

  constructor(
    private readonly templates: Templates,
    private readonly schema: string,
    private readonly caller: CatalogCaller,
    private readonly ctes: Set<string>,
  ) {
    this.searchPath = searchPathOf(caller);
  }

  /** Nodes whose children were rewritten already (calls, casts). */
  private readonly walked = new Set<TreeObject>();

  value(value: TreeValue): TreeValue {
    if (Array.isArray(value)) return value.map((v) => this.value(v));
    if (!isTreeObject(value)) return value;
    const replaced = this.node(value);
    if (replaced !== value || this.walked.has(value)) return replaced;
    for (const key in value) value[key] = this.value(value[key] as TreeValue);
    return value;
  }

  private node(node: TreeObject): TreeValue {
    const replaced = this.replace(node);
    // A value put in a function's or a word's place keeps its name as a column (`version`).
    if (replaced !== node && isTreeObject(replaced) && replaced.class === 'CONSTANT' && replaced.alias === '')
      replaced.alias = typeof node.alias === 'string' && node.alias !== '' ? node.alias : nameOf(node);
    return replaced;
  }

  private replace(node: TreeObject): TreeValue {
    if (node.type === 'BASE_TABLE') return this.table(node);
    if (node.type === 'TABLE_FUNCTION' && isTreeObject(node.function)) {
      node.function.schema = '';
      // PostgreSQL names the one column of `generate_series(…) s` after the alias; DuckDB, the row.
      if (
        typeof node.alias === 'string' &&
        node.alias !== '' &&
        Array.isArray(node.column_name_alias) &&
        node.column_name_alias.length === 0
      )
        node.column_name_alias = [node.alias];
    }
    if (node.class === 'COLLATE') return this.value(node.child as TreeValue);
    if (node.class === 'SUBQUERY') {
      const list = unnestedList(node);
      // `x = ANY(array)`: DuckDB plans it as a subquery, which it cannot outer-join on.
      if (list && node.subquery_type === 'ANY' && node.comparison_type === 'COMPARE_EQUAL')
        return this.callOf('list_contains', [this.value(list), this.value(node.child as TreeValue)]);
      if (list && node.subquery_type === 'ALL' && node.comparison_type === 'COMPARE_NOTEQUAL')
        return this.not(
          this.callOf('list_contains', [this.value(list), this.value(node.child as TreeValue)]),
        );
    }
    if (node.class === 'COLUMN_REF' && Array.isArray(node.column_names) && node.column_names.length === 1) {
      const word = lowerOf(node.column_names[0]);
      if (SESSION_WORDS.has(word)) return this.sessionValue(word, node) ?? node;
    }
    if (node.class === 'CAST') return this.cast(node);
    if (node.class === 'FUNCTION') return this.call(node);
    if (isTreeObject(node.type_info)) this.typeInfo(node.type_info);
    return node;
  }

  private table(node: TreeObject): TreeObject {
    const schema = lowerOf(node.schema_name);
    const name = lowerOf(node.table_name);
    if (schema === '' && this.ctes.has(name)) return node;
    const source = schema === '' ? 'pg_catalog' : schema;
    if (!isCatalogRelation(source, name))
      throw new WireError(SQLSTATE.undefinedTable, `relation "${source}.${name}" does not exist`);
    const qualified = `${source}.${name}`;
    node.catalog_name = '';
    if (PER_CALLER.has(qualified)) {
      node.schema_name = this.schema;
      node.table_name = callerTableName(qualified);
    } else {
      node.schema_name = SHARED_SCHEMA[source as keyof typeof SHARED_SCHEMA];
      node.table_name = name;
    }
    // The alias keeps the name a query's columns are qualified with (`pg_class.oid`).
    if (node.alias === '') node.alias = name;
    return node;
  }

  private typeInfo(info: TreeObject): void {
    if (info.type === 'UNBOUND_TYPE_INFO' && lowerOf(info.schema) === 'pg_catalog') info.schema = '';
    for (const key in info) {
      const child = info[key];
      if (isTreeObject(child)) this.typeInfo(child);
    }
  }

  private cast(node: TreeObject): TreeValue {
    const type = isTreeObject(node.cast_type) ? node.cast_type : undefined;
    const info = type && isTreeObject(type.type_info) ? type.type_info : undefined;
    const lookup = info && info.type === 'UNBOUND_TYPE_INFO' ? LOOKUP_CASTS[lowerOf(info.name)] : undefined;
    if (lookup) {
      return this.callOf(
        lookup.macro,
        [this.value(node.child as TreeValue)],
        lookup.caller ? this.schema : '',
      );
    }
    if (info) this.typeInfo(info);
    node.child = this.value(node.child as TreeValue);
    this.walked.add(node);
    return node;
  }

  private call(node: TreeObject): TreeValue {
    const schema = lowerOf(node.schema);
    if (schema === 'pg_catalog' || schema === 'information_schema') node.schema = '';
    const name = lowerOf(node.function_name);
    const children = (Array.isArray(node.children) ? node.children : []).map((c) => this.value(c));
    node.children = children;
    node.filter = this.value(node.filter ?? null);
    node.order_bys = this.value(node.order_bys ?? null);
    this.walked.add(node);
    const session = this.sessionCall(name, children);
    if (session !== undefined) return session;
    if (name === 'pg_catalog' && node.is_operator === true) return this.callOf('regexp_matches', children);
    if (name === 'regexp_full_match') node.function_name = 'regexp_matches';
    if (name === '~*') return this.callOf('regexp_matches', [...children, this.constant('i')]);
    if (name === '!~*') return this.not(this.callOf('regexp_matches', [...children, this.constant('i')]));
    if (name === 'json_build_object') node.function_name = 'json_object';
    if (name === 'pg_table_is_visible')
      node.children = [
        ...children,
        this.callOf('string_split', [this.constant(this.searchPath.join(',')), this.constant(',')]),
      ];
    if (CALLER_FUNCTIONS.has(name)) node.schema = this.schema;
    node.is_operator = node.is_operator === true && name !== 'pg_catalog';
    return node;
  }

  /** A call's value when it is the session's: version(), current_schema(), current_setting('x'), … */
  private sessionCall(name: string, children: TreeValue[]): TreeValue | undefined {
    switch (name) {
      case 'version':
        return this.constant(VERSION_TEXT);
      case 'current_database':
      case 'current_catalog':
        return this.constant('dune');
      case 'current_schema':
      case 'current_user':
      case 'session_user':
        return this.sessionValue(name, undefined);
      case 'pg_backend_pid':
        return this.constant(String(this.caller.processId), 'INTEGER');
      case 'pg_postmaster_start_time':
        return this.constant(processStart);
      case 'current_schemas': {
        const implicit = children[0] === undefined || JSON.stringify(children[0]).includes('true');
        const list = implicit ? ['pg_catalog', ...this.searchPath] : this.searchPath;
        return this.callOf('string_split', [this.constant(list.join(',')), this.constant(',')]);
      }
      case 'current_setting': {
        const argument = children[0];
        const value =
          isTreeObject(argument) && isTreeObject(argument.value) ? argument.value.value : undefined;
        if (
          argument === undefined ||
          !isTreeObject(argument) ||
          argument.class !== 'CONSTANT' ||
          typeof value !== 'string'
        )
          throw new WireError(SQLSTATE.featureNotSupported, 'current_setting takes a constant name here');
        return this.constant(this.caller.settings.show(value).value);
      }
      case 'inet_server_addr':
      case 'inet_client_addr':
      case 'inet_server_port':
      case 'inet_client_port':
        return this.constant(null);
      default:
        return undefined;
    }
  }

  private sessionValue(word: string, node: TreeObject | undefined): TreeValue | undefined {
    if (word === 'current_catalog') return this.constant('dune');
    if (word === 'current_schema') return this.constant(this.searchPath[0] ?? this.caller.account.handle);
    if (SESSION_WORDS.has(word) || word === 'session_user') return this.constant(this.caller.account.handle);
    return node;
  }

  private constant(value: string | null, typeId = 'VARCHAR'): TreeObject {
    const node = clone(this.templates.constant);
    node.value = {
      type: { id: typeId, type_info: null },
      is_null: value === null,
      value: typeId === 'VARCHAR' ? value : `\u0000${value}`,
    };
    return node;
  }

  private callOf(name: string, children: TreeValue[], schema = ''): TreeObject {
    const node = clone(this.templates.call);
    node.function_name = name;
    node.schema = schema;
    node.children = children;
    return node;
  }

  private not(child: TreeValue): TreeObject {
    const node = clone(this.templates.not);
    node.children = [child];
    return node;
  }
}

/** The array of `x = ANY(array)`, when the subquery is exactly DuckDB's `SELECT unnest(array)`. */
function unnestedList(node: TreeObject): TreeValue | undefined {
  const select =
    isTreeObject(node.subquery) && isTreeObject(node.subquery.node) ? node.subquery.node : undefined;
  const items = select?.select_list;
  const from = select?.from_table;
  if (!select || !Array.isArray(items) || items.length !== 1 || !isTreeObject(from) || from.type !== 'EMPTY')
    return undefined;
  const call = items[0];
  if (!isTreeObject(call) || call.class !== 'FUNCTION' || call.function_name !== 'unnest') return undefined;
  return Array.isArray(call.children) && call.children.length === 1
    ? (call.children[0] as TreeValue)
    : undefined;
}

/** The column name PostgreSQL gives a function call or a bare word. */
function nameOf(node: TreeObject): string {
  if (typeof node.function_name === 'string') return node.function_name;
  if (Array.isArray(node.column_names)) return String(node.column_names[node.column_names.length - 1]);
  return '';
}

/**
 * `::pg_catalog.text` as `::text`: DuckDB's parser takes no qualified name for a type that is
 * a keyword (psql's `\d` writes `reloftype::pg_catalog.regtype::pg_catalog.text`). Done on
 * tokens (sql-text.ts), so a string or comment holding the same characters is left alone;
 * only for the catalog's parse: a query that is not about the catalog goes on as written.
 */
export function withoutCastQualifiers(text: string): string {
  const list = tokens(text);
  let result = '';
  let copied = 0;
  for (let i = 0; i + 3 < list.length; i++) {
    const [a, b, schema, dot] = [list[i], list[i + 1], list[i + 2], list[i + 3]] as Token[];
    if (
      a.text === ':' &&
      b.text === ':' &&
      b.start === a.end &&
      schema.kind === 'word' &&
      schema.text === 'pg_catalog' &&
      dot.text === '.'
    ) {
      result += text.slice(copied, schema.start);
      copied = dot.end;
    }
  }
  return result + text.slice(copied);
}

/** The session's search path as schema names ("$user" is the caller's namespace). */
function searchPathOf(caller: CatalogCaller): string[] {
  const path = caller.settings
    .get('search_path')
    .split(',')
    .map((part) => part.trim().replace(/^"(.*)"$/, '$1'))
    .map((part) => (part === '$user' ? caller.account.handle : part))
    .filter((part) => part !== '' && part !== 'public');
  return path.length > 0 ? path : [caller.account.handle];
}
