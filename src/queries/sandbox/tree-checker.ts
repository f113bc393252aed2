import {
  ALLOWED_FUNCTIONS,
  ALLOWED_TABLE_FUNCTIONS,
  BUILT_IN_TYPE_NAMES,
  DENIED_FUNCTIONS,
} from './allowed-functions.js';
import { isTreeNumber, isTreeObject, type TreeObject, type TreeValue, treeNumberText } from './parse-tree.js';
import { SqlRefusal } from './refusals.js';
import { foldName, type NamedTable, type WrittenName } from './table-names.js';
import {
  CASE_CHECK,
  COLUMN_KEY,
  CTE_DEFINITION,
  CTE_ENTRY,
  CTE_MAP,
  EXPRESSION_SHAPES,
  type FieldKind,
  LOGICAL_TYPE,
  MODIFIER_SHAPES,
  ORDER,
  PIVOT_COLUMN,
  PIVOT_ENTRY,
  QUERY_NODE_SHAPES,
  RENAME,
  REPLACEMENT,
  SAMPLE,
  type Shape,
  STATEMENT,
  STRUCT_FIELD,
  TABLE_SHAPES,
  TYPE_INFO_SHAPES,
  VALUE,
} from './tree-shapes.js';

/**
 * Walks one statement of DuckDB's parse tree (users' SQL, DESIGN §10): refuses what a
 * query may not contain, renames the query's own CTEs, and lists every other table it
 * names, for the caller to resolve and rewrite.
 *
 * CTEs are renamed (`cte_1`, `cte_2`…, each reference keeping the name it was written with
 * as its alias) so that after the rewrite every unqualified table name in the SQL is a CTE
 * defined in it, and every other one is a table the resolver allowed, written out in full.
 * The scoping follows DuckDB's, as measured on 1.5.6: a CTE is seen by the query it belongs
 * to, by the CTEs defined after it in the same WITH and by everything nested inside those;
 * not by itself (`WITH a AS (SELECT * FROM a)` reads the table `a`) nor by earlier siblings;
 * a recursive CTE sees itself only in the recursive part (right of its UNION); a qualified
 * name (`alice.a`) never means a CTE. Were this scoping wrong somewhere, the renamed CTE
 * would be missing there and DuckDB would fail to find it: no table would be read by
 * mistake, but DuckDB's catalog error, whose "Did you mean" hints name other tables, must not
 * reach the user (test/queries/sandbox.test.ts compares the scoping with DuckDB's own).
 */

export interface CheckOptions {
  /** Whether `$1`, `$2`, … may stand for values bound when the query runs (the Postgres wire protocol). */
  parameters?: boolean;
}

/** A table the walk found: where it is in the tree, and its name. */
export interface TableReference extends NamedTable {
  /** The BASE_TABLE node, for the caller to rewrite once the name is resolved. */
  node: TreeObject;
}

/** How DuckDB writes a double constant that is not finite (`1e400`). */
const NOT_FINITE = new Set(['Infinity', '-Infinity', 'NaN']);

/** `query_location` when DuckDB knows none (uint64's largest value). */
const NO_LOCATION = '18446744073709551615';

interface Cte {
  /** What a reference is rewritten to. */
  renamed: string;
}

/** The CTEs a part of a query sees: a chain from the innermost definition outwards. */
class Scope {
  private constructor(
    private readonly name: string | undefined,
    private readonly cte: Cte | undefined,
    private readonly outer: Scope | undefined,
  ) {}

  static readonly EMPTY = new Scope(undefined, undefined, undefined);

  with(name: string, cte: Cte): Scope {
    return new Scope(name, cte, this);
  }

  find(name: string): Cte | undefined {
    for (let scope: Scope | undefined = this; scope; scope = scope.outer) {
      if (scope.name === name) return scope.cte;
    }
    return undefined;
  }
}

/** Where the walk is: the CTEs in scope, and the nearest position known. */
interface Context {
  scope: Scope;
  location: number | undefined;
  /** Set while walking a CTE's own query: the CTE a RECURSIVE_CTE_NODE there defines. */
  defining?: { name: string; cte: Cte };
}

/**
 * Checks `statement` (one element of `statements`), renaming its CTEs in place, and returns
 * the table references that are not CTEs, in the order they appear.
 */
export function checkStatement(statement: TreeValue, options: CheckOptions = {}): TableReference[] {
  const walker = new TreeWalker(options);
  walker.statement(statement, { scope: Scope.EMPTY, location: undefined });
  return walker.tables;
}

/** `$1`, `$2`, … (and `?`, which DuckDB numbers): a value bound at run time, nothing more. */
function isNumberedParameter(node: TreeObject): boolean {
  const keys = Object.keys(node).sort().join(',');
  return (
    keys === 'alias,class,identifier,query_location,type' &&
    node.type === 'VALUE_PARAMETER' &&
    typeof node.identifier === 'string' &&
    /^[1-9][0-9]{0,4}$/.test(node.identifier)
  );
}

/** The kinds of field that hold a single value (or null); every other kind holds an array. */
type ValueFieldKind =
  | 'special'
  | 'data'
  | 'number'
  | 'expression'
  | 'table'
  | 'query-node'
  | 'statement'
  | 'order-modifier'
  | 'sample'
  | 'type'
  | 'value';
type ListFieldKind = Exclude<FieldKind, ValueFieldKind>;

/** Array fields whose items are objects of one shape, and what messages call an item. */
const OBJECT_LISTS: Readonly<
  Record<'orders' | 'case-checks' | 'column-keys' | 'replacements', [string, Shape]>
> = {
  orders: ['ORDER BY', ORDER],
  'case-checks': ['CASE', CASE_CHECK],
  'column-keys': ['column name', COLUMN_KEY],
  replacements: ['REPLACE', REPLACEMENT],
};

class TreeWalker {
  readonly tables: TableReference[] = [];
  private ctes = 0;

  constructor(private readonly options: CheckOptions) {}

  statement(value: TreeValue, context: Context): void {
    if (value === null) return;
    const statement = this.object(value, 'statement', context);
    this.fields(statement, STATEMENT, context);
    const parameters = statement.named_param_map;
    if (
      parameters !== undefined &&
      !(Array.isArray(parameters) && (parameters.length === 0 || this.options.parameters))
    ) {
      throw new SqlRefusal(
        'prepared-statement parameters ($1, ?, $name) are not supported: write the value itself, or declare a query parameter and write {{name}}',
        context.location,
      );
    }
    this.queryNode(statement.node ?? null, context);
  }

  queryNode(value: TreeValue, outer: Context): void {
    if (value === null) return;
    const node = this.kindOf(value, 'type', QUERY_NODE_SHAPES, 'query', outer);
    const context = this.cteMap(node.object.cte_map ?? null, outer);
    if (node.kind === 'RECURSIVE_CTE_NODE') this.recursiveCte(node.object, context, outer);
    this.fields(node.object, node.shape, { ...context, defining: undefined });
  }

  /** Defines the CTEs of one WITH, each seen by the ones after it; returns the scope after all. */
  private cteMap(value: TreeValue, outer: Context): Context {
    if (value === null) return outer;
    const withClause = this.object(value, 'WITH clause', outer);
    this.fields(withClause, CTE_MAP, outer);
    const map = withClause.map ?? [];
    let scope = outer.scope;
    for (const item of this.array(map, 'WITH clause', outer)) {
      const entry = this.object(item, 'WITH clause', outer);
      this.fields(entry, CTE_ENTRY, outer);
      const name = this.text(entry.key, 'CTE name', outer);
      const definition = this.object(entry.value ?? null, 'CTE', outer);
      const cte: Cte = { renamed: `cte_${++this.ctes}` };
      const inside: Context = { scope, location: outer.location, defining: { name: foldName(name), cte } };
      this.statement(definition.query ?? null, inside);
      this.fields(definition, CTE_DEFINITION, { scope, location: outer.location });
      entry.key = cte.renamed;
      scope = scope.with(foldName(name), cte);
    }
    return { scope, location: outer.location };
  }

  /** The anchor (left) does not see the CTE being defined; the recursive part (right) does. */
  private recursiveCte(node: TreeObject, context: Context, outer: Context): void {
    const name = this.text(node.cte_name, 'recursive CTE name', context);
    const defining = outer.defining;
    if (!defining || defining.name !== foldName(name)) {
      throw new SqlRefusal(
        `unsupported SQL construct: a recursive query outside its WITH clause`,
        context.location,
      );
    }
    node.cte_name = defining.cte.renamed;
    this.queryNode(node.left ?? null, context);
    this.queryNode(node.right ?? null, {
      ...context,
      scope: context.scope.with(defining.name, defining.cte),
    });
  }

  table(value: TreeValue, context: Context): void {
    if (value === null) return;
    const table = this.kindOf(value, 'type', TABLE_SHAPES, 'table reference', context);
    const here = this.at(table.object, context);
    if (table.kind === 'BASE_TABLE') this.baseTable(table.object, here);
    if (table.kind === 'TABLE_FUNCTION') this.tableFunction(table.object, here);
    this.fields(table.object, table.shape, here);
  }

  private baseTable(node: TreeObject, context: Context): void {
    if (node.at_clause !== null && node.at_clause !== undefined) {
      throw new SqlRefusal('time travel (AT (VERSION => …)) is not supported', context.location);
    }
    const catalog = this.text(node.catalog_name ?? '', 'catalog name', context);
    const schema = this.text(node.schema_name ?? '', 'schema name', context);
    const table = this.text(node.table_name, 'table name', context);
    const cte = catalog === '' && schema === '' ? context.scope.find(foldName(table)) : undefined;
    if (cte) {
      node.table_name = cte.renamed;
      if (node.alias === '') node.alias = table;
      return;
    }
    const written: WrittenName = {
      ...(catalog ? { catalog } : {}),
      ...(schema ? { schema } : {}),
      table,
    };
    const folded: WrittenName = {
      ...(catalog ? { catalog: foldName(catalog) } : {}),
      ...(schema ? { schema: foldName(schema) } : {}),
      table: foldName(table),
    };
    this.tables.push({ node, written, folded, location: context.location });
  }

  private tableFunction(node: TreeObject, context: Context): void {
    const call = this.kindOf(node.function ?? null, 'class', EXPRESSION_SHAPES, 'table function', context);
    if (call.kind !== 'FUNCTION') {
      throw new SqlRefusal(
        `unsupported SQL construct: a table function given as ${call.kind}`,
        context.location,
      );
    }
    const here = this.at(call.object, context);
    const name = this.functionName(call.object, here);
    if (!ALLOWED_TABLE_FUNCTIONS.has(foldName(name))) {
      throw new SqlRefusal(
        `table function ${name} is not available in queries; the ones that are: ${[...ALLOWED_TABLE_FUNCTIONS].join(', ')}`,
        here.location,
      );
    }
    this.fields(call.object, call.shape, here);
  }

  expression(value: TreeValue, context: Context): void {
    if (value === null) return;
    if (isTreeObject(value) && value.class === 'PARAMETER') {
      if (this.options.parameters && isNumberedParameter(value)) return;
      throw new SqlRefusal(
        'prepared-statement parameters ($1, ?, $name) are not supported: write the value itself, or declare a query parameter and write {{name}}',
        this.at(value, context).location,
      );
    }
    const expression = this.kindOf(value, 'class', EXPRESSION_SHAPES, 'expression', context);
    const here = this.at(expression.object, context);
    if (expression.kind === 'FUNCTION' || expression.kind === 'WINDOW') {
      const name = this.functionName(expression.object, here);
      const folded = foldName(name);
      if (!ALLOWED_FUNCTIONS.has(folded)) {
        const reason = DENIED_FUNCTIONS.get(folded);
        throw new SqlRefusal(
          reason
            ? `function ${name} is not available in queries: it ${reason}`
            : `function ${name} does not exist or is not available in queries`,
          here.location,
        );
      }
    }
    this.fields(expression.object, expression.shape, here);
  }

  /**
   * The function's name, for the lists of allowed-functions.ts. The parser itself writes
   * `main.list_value` for `[1, 2]` (and `main.trim`, `main.row`, `main.struct_pack`…), and
   * DuckDB looks `main.f` up as it looks up `f`, so schema `main` is accepted and the name
   * decides; any other qualification (`pg_catalog.f`, `system.main.f`) is refused.
   */
  private functionName(call: TreeObject, context: Context): string {
    const name = this.text(call.function_name, 'function name', context);
    const schema = this.text(call.schema ?? '', 'function schema', context);
    const catalog = this.text(call.catalog ?? '', 'function catalog', context);
    if ((schema !== '' && foldName(schema) !== 'main') || catalog !== '') {
      const shown = [catalog, schema, name].filter((part) => part !== '').join('.');
      throw new SqlRefusal(
        `function ${shown} is not available in queries: call functions without a schema or catalog`,
        context.location,
      );
    }
    return name;
  }

  type(value: TreeValue, context: Context): void {
    if (value === null) return;
    const type = this.object(value, 'type', context);
    this.fields(type, LOGICAL_TYPE, context);
    const info = type.type_info ?? null;
    if (info === null) return;
    const details = this.kindOf(info, 'type', TYPE_INFO_SHAPES, 'type', context);
    if (details.object.extension_info !== null && details.object.extension_info !== undefined) {
      throw new SqlRefusal('unsupported SQL construct: an extension type', context.location);
    }
    if (details.kind === 'UNBOUND_TYPE_INFO') {
      const name = this.text(details.object.name, 'type name', context);
      const schema = this.text(details.object.schema ?? '', 'type schema', context);
      const catalog = this.text(details.object.catalog ?? '', 'type catalog', context);
      if (schema !== '' || catalog !== '' || !BUILT_IN_TYPE_NAMES.has(foldName(name))) {
        const shown = [catalog, schema, name].filter((part) => part !== '').join('.');
        throw new SqlRefusal(`type ${shown} does not exist`, context.location);
      }
    }
    if (details.kind === 'STRUCT_TYPE_INFO') {
      for (const child of this.array(details.object.child_types ?? [], 'type', context)) {
        this.fields(this.object(child, 'type', context), STRUCT_FIELD, context);
      }
    }
    this.fields(details.object, details.shape, context);
  }

  /** Walks every field of `object` by `shape`; 'special' fields are the caller's. */
  fields(object: TreeObject, shape: Shape, context: Context): void {
    for (const key in object) {
      // Own properties only: a key such as "constructor" must not find Object.prototype's.
      const kind = Object.hasOwn(shape, key) ? shape[key] : undefined;
      if (kind === undefined) {
        throw new SqlRefusal(`unsupported SQL construct: parse-tree field "${key}"`, context.location);
      }
      this.field(kind, object[key] as TreeValue, key, context);
    }
  }

  /**
   * A field holding one value, or null: `key` names it in messages. Switches rather than a table
   * of closures by kind: walking the bench's trees alone, such a table (one call site calling
   * some twenty closures) took 15–34% longer than one switch; these two take what it took.
   */
  private field(kind: FieldKind, value: TreeValue, key: string, context: Context): void {
    switch (kind) {
      case 'special':
        return;
      case 'data':
        if (typeof value !== 'string' && typeof value !== 'boolean') this.malformed(key, context);
        return;
      case 'number':
        if (!isTreeNumber(value)) this.malformed(key, context);
        return;
      case 'expression':
        this.expression(value, context);
        return;
      case 'table':
        this.table(value, context);
        return;
      case 'query-node':
        this.queryNode(value, context);
        return;
      case 'statement':
        this.statement(value, context);
        return;
      case 'order-modifier':
        this.modifier(value, context);
        return;
      case 'sample':
        this.sample(value, context);
        return;
      case 'type':
        this.type(value, context);
        return;
      case 'value':
        this.value(value, context);
        return;
      default:
        this.listField(kind, this.array(value, key, context), key, context);
    }
  }

  /** A field holding an array, each item walked by its kind. */
  private listField(kind: ListFieldKind, items: TreeValue[], key: string, context: Context): void {
    switch (kind) {
      case 'texts':
        for (const item of items) if (typeof item !== 'string') this.malformed(key, context);
        return;
      case 'expressions':
        for (const item of items) this.expression(item, context);
        return;
      case 'expression-rows':
        for (const row of items) {
          for (const item of this.array(row, key, context)) this.expression(item, context);
        }
        return;
      case 'modifiers':
        for (const item of items) this.modifier(item, context);
        return;
      case 'types':
        for (const item of items) this.type(item, context);
        return;
      case 'values':
        for (const item of items) this.value(item, context);
        return;
      case 'pivots':
        for (const item of items) this.pivot(item, context);
        return;
      case 'renames':
        for (const item of items) this.rename(item, context);
        return;
      case 'index-sets':
        for (const set of items) {
          for (const index of this.array(set, key, context))
            if (!isTreeNumber(index)) this.malformed(key, context);
        }
        return;
      default: {
        const [what, shape] = OBJECT_LISTS[kind];
        for (const item of items) this.fields(this.object(item, what, context), shape, context);
      }
    }
  }

  private rename(value: TreeValue, context: Context): void {
    const rename = this.object(value, 'RENAME', context);
    this.fields(this.object(rename.key ?? null, 'RENAME', context), COLUMN_KEY, context);
    this.fields(rename, RENAME, context);
  }

  private modifier(value: TreeValue, context: Context): void {
    if (value === null) return;
    const modifier = this.kindOf(value, 'type', MODIFIER_SHAPES, 'result modifier', context);
    this.fields(modifier.object, modifier.shape, context);
  }

  private sample(value: TreeValue, context: Context): void {
    if (value === null) return;
    const sample = this.object(value, 'sample', context);
    const seed = sample.seed ?? null;
    if (seed !== null && !isTreeNumber(seed)) this.malformed('seed', context);
    this.fields(sample, SAMPLE, context);
  }

  /** A constant: its content is data, only its type is looked at. */
  private value(value: TreeValue, context: Context): void {
    const constant = this.object(value, 'constant', context);
    // DuckDB writes `1e400` into the tree as Infinity, which json_deserialize_sql cannot read.
    const content = constant.value;
    if (isTreeNumber(content) && NOT_FINITE.has(treeNumberText(content))) {
      throw new SqlRefusal(
        "a number beyond DOUBLE's range is not supported: write 'infinity'::DOUBLE",
        context.location,
      );
    }
    this.fields(constant, VALUE, context);
  }

  private pivot(value: TreeValue, context: Context): void {
    const pivot = this.object(value, 'PIVOT', context);
    // `IN enum_name` takes the values from an enum type in the catalog.
    if (pivot.pivot_enum !== undefined && pivot.pivot_enum !== '') {
      throw new SqlRefusal('PIVOT … IN <type name> is not supported: list the values', context.location);
    }
    for (const entry of this.array(pivot.entries ?? [], 'PIVOT', context)) {
      this.fields(this.object(entry, 'PIVOT', context), PIVOT_ENTRY, context);
    }
    this.fields(pivot, PIVOT_COLUMN, context);
  }

  /** `value` as an object of a known kind; anything else is refused. */
  private kindOf(
    value: TreeValue,
    key: string,
    shapes: Readonly<Record<string, Shape>>,
    what: string,
    context: Context,
  ): { kind: string; object: TreeObject; shape: Shape } {
    if (!isTreeObject(value)) return this.malformed(what, context);
    const kind = value[key];
    const shape = typeof kind === 'string' && Object.hasOwn(shapes, kind) ? shapes[kind] : undefined;
    if (typeof kind !== 'string' || !shape) {
      const location = this.at(value, context).location;
      if (kind === 'SHOW_REF') {
        throw new SqlRefusal(
          'DESCRIBE, SHOW and SUMMARIZE are not supported: query the table instead',
          location,
        );
      }
      throw new SqlRefusal(`unsupported SQL construct: ${what} of kind ${String(kind)}`, location);
    }
    return { kind, object: value, shape };
  }

  private object(value: TreeValue, what: string, context: Context): TreeObject {
    if (!isTreeObject(value)) return this.malformed(what, context);
    return value;
  }

  private array(value: TreeValue | undefined, what: string, context: Context): TreeValue[] {
    if (!Array.isArray(value)) return this.malformed(what, context);
    return value;
  }

  private text(value: TreeValue | undefined, what: string, context: Context): string {
    if (typeof value !== 'string') return this.malformed(what, context);
    return value;
  }

  /** The context with this node's position, when it has one. */
  private at(node: TreeObject, context: Context): Context {
    const location = node.query_location;
    if (!isTreeNumber(location) || treeNumberText(location) === NO_LOCATION) return context;
    return { ...context, location: Number(treeNumberText(location)) };
  }

  private malformed(what: string, context: Context): never {
    throw new SqlRefusal(
      `unsupported SQL construct: an unexpected ${what} in the parse tree`,
      context.location,
    );
  }
}
