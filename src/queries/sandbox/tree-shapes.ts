/**
 * Every kind of node users' SQL may contain, and every field each kind may have, in
 * DuckDB 1.5.6's `json_serialize_sql` tree. The checker walks a tree by these shapes alone:
 * a kind or a field missing here is refused, never skipped, so a construct nobody listed
 * (a new DuckDB statement or clause) cannot slip past the walk.
 *
 * Found by serializing a corpus of queries using every clause in DuckDB's SELECT grammar and
 * collecting the keys (test/queries/sandbox-valid.test.ts runs that corpus).
 */

/** What a field holds, and so how the checker walks it. */
export type FieldKind =
  /** A string or a boolean that means nothing beyond itself (a name, an enum value, a flag). */
  | 'data'
  /** A JSON number: a position or an index. */
  | 'number'
  | 'texts'
  /** An expression, or null. */
  | 'expression'
  | 'expressions'
  /** Rows of expressions (`VALUES`). */
  | 'expression-rows'
  | 'table'
  | 'query-node'
  /** `{node, named_param_map}`: a whole query, as in a subquery or a CTE. */
  | 'statement'
  | 'modifiers'
  /** A single ORDER BY modifier (the `order_bys` of an aggregate). */
  | 'order-modifier'
  | 'orders'
  | 'sample'
  | 'type'
  | 'types'
  | 'value'
  | 'values'
  | 'case-checks'
  | 'pivots'
  /** `[{catalog, schema, table, column}]`, names of columns, never of catalog entries. */
  | 'column-keys'
  | 'renames'
  | 'replacements'
  /** Grouping sets: lists of indexes into the group expressions. */
  | 'index-sets'
  /** Handled by the checker itself (CTE maps, table names, function names). */
  | 'special';

export type Shape = Readonly<Record<string, FieldKind>>;

const EXPRESSION: Shape = { class: 'special', type: 'data', alias: 'data', query_location: 'number' };

const FUNCTION_NAME: Shape = { function_name: 'special', schema: 'special', catalog: 'special' };

/** Expressions by `class`. PARAMETER and DEFAULT are left out on purpose. */
export const EXPRESSION_SHAPES: Readonly<Record<string, Shape>> = {
  BETWEEN: { ...EXPRESSION, input: 'expression', lower: 'expression', upper: 'expression' },
  CASE: { ...EXPRESSION, case_checks: 'case-checks', else_expr: 'expression' },
  CAST: { ...EXPRESSION, child: 'expression', cast_type: 'type', try_cast: 'data' },
  COLLATE: { ...EXPRESSION, child: 'expression', collation: 'data' },
  COLUMN_REF: { ...EXPRESSION, column_names: 'texts' },
  COMPARISON: { ...EXPRESSION, left: 'expression', right: 'expression' },
  CONJUNCTION: { ...EXPRESSION, children: 'expressions' },
  CONSTANT: { ...EXPRESSION, value: 'value' },
  FUNCTION: {
    ...EXPRESSION,
    ...FUNCTION_NAME,
    children: 'expressions',
    filter: 'expression',
    order_bys: 'order-modifier',
    distinct: 'data',
    is_operator: 'data',
    export_state: 'data',
  },
  LAMBDA: { ...EXPRESSION, lhs: 'expression', expr: 'expression' },
  OPERATOR: { ...EXPRESSION, children: 'expressions' },
  POSITIONAL_REFERENCE: { ...EXPRESSION, index: 'number' },
  STAR: {
    ...EXPRESSION,
    relation_name: 'data',
    exclude_list: 'texts',
    replace_list: 'replacements',
    columns: 'data',
    expr: 'expression',
    qualified_exclude_list: 'column-keys',
    rename_list: 'renames',
  },
  SUBQUERY: {
    ...EXPRESSION,
    subquery_type: 'data',
    subquery: 'statement',
    child: 'expression',
    comparison_type: 'data',
  },
  WINDOW: {
    ...EXPRESSION,
    ...FUNCTION_NAME,
    children: 'expressions',
    partitions: 'expressions',
    orders: 'orders',
    start: 'data',
    end: 'data',
    start_expr: 'expression',
    end_expr: 'expression',
    offset_expr: 'expression',
    default_expr: 'expression',
    ignore_nulls: 'data',
    filter_expr: 'expression',
    exclude_clause: 'data',
    distinct: 'data',
    arg_orders: 'orders',
  },
};

const TABLE: Shape = { type: 'special', alias: 'data', sample: 'sample', query_location: 'number' };

/** Table references by `type`. SHOW_REF (DESCRIBE, SHOW, SUMMARIZE) is left out on purpose. */
export const TABLE_SHAPES: Readonly<Record<string, Shape>> = {
  BASE_TABLE: {
    ...TABLE,
    schema_name: 'special',
    table_name: 'special',
    catalog_name: 'special',
    column_name_alias: 'texts',
    at_clause: 'special',
  },
  EMPTY: TABLE,
  EXPRESSION_LIST: { ...TABLE, expected_names: 'texts', expected_types: 'types', values: 'expression-rows' },
  JOIN: {
    ...TABLE,
    left: 'table',
    right: 'table',
    condition: 'expression',
    join_type: 'data',
    ref_type: 'data',
    using_columns: 'texts',
    delim_flipped: 'data',
    duplicate_eliminated_columns: 'expressions',
  },
  PIVOT: {
    ...TABLE,
    source: 'table',
    aggregates: 'expressions',
    unpivot_names: 'texts',
    pivots: 'pivots',
    groups: 'texts',
    column_name_alias: 'texts',
    include_nulls: 'data',
  },
  SUBQUERY: { ...TABLE, subquery: 'statement', column_name_alias: 'texts' },
  TABLE_FUNCTION: { ...TABLE, function: 'special', column_name_alias: 'texts', with_ordinality: 'data' },
};

const QUERY_NODE: Shape = { type: 'special', modifiers: 'modifiers', cte_map: 'special' };

/** Query nodes by `type`. */
export const QUERY_NODE_SHAPES: Readonly<Record<string, Shape>> = {
  SELECT_NODE: {
    ...QUERY_NODE,
    select_list: 'expressions',
    from_table: 'table',
    where_clause: 'expression',
    group_expressions: 'expressions',
    group_sets: 'index-sets',
    aggregate_handling: 'data',
    having: 'expression',
    sample: 'sample',
    qualify: 'expression',
  },
  SET_OPERATION_NODE: {
    ...QUERY_NODE,
    setop_type: 'data',
    setop_all: 'data',
    left: 'query-node',
    right: 'query-node',
  },
  // Walked by the checker itself: its right side may read the CTE being defined.
  RECURSIVE_CTE_NODE: {
    ...QUERY_NODE,
    cte_name: 'special',
    union_all: 'data',
    left: 'special',
    right: 'special',
    aliases: 'texts',
    key_targets: 'expressions',
  },
};

/** Result modifiers by `type`. */
export const MODIFIER_SHAPES: Readonly<Record<string, Shape>> = {
  LIMIT_MODIFIER: { type: 'special', limit: 'expression', offset: 'expression' },
  LIMIT_PERCENT_MODIFIER: { type: 'special', limit: 'expression', offset: 'expression' },
  ORDER_MODIFIER: { type: 'special', orders: 'orders' },
  DISTINCT_MODIFIER: { type: 'special', distinct_on_targets: 'expressions' },
};

/** The smaller structures, which have no kind of their own. */
export const STATEMENT: Shape = { node: 'special', named_param_map: 'special' };
export const CTE_MAP: Shape = { map: 'special' };
export const CTE_ENTRY: Shape = { key: 'special', value: 'special' };
export const CTE_DEFINITION: Shape = {
  aliases: 'texts',
  query: 'special',
  materialized: 'data',
  key_targets: 'expressions',
};
export const ORDER: Shape = { type: 'data', null_order: 'data', expression: 'expression' };
export const CASE_CHECK: Shape = { when_expr: 'expression', then_expr: 'expression' };
export const SAMPLE: Shape = { sample_size: 'value', is_percentage: 'data', method: 'data', seed: 'special' };
export const PIVOT_COLUMN: Shape = {
  pivot_expressions: 'expressions',
  unpivot_names: 'texts',
  entries: 'special',
  pivot_enum: 'special',
};
export const PIVOT_ENTRY: Shape = { values: 'values', star_expr: 'expression', alias: 'data' };
export const COLUMN_KEY: Shape = { catalog: 'data', schema: 'data', table: 'data', column: 'data' };
export const RENAME: Shape = { key: 'special', value: 'data' };
export const REPLACEMENT: Shape = { key: 'data', value: 'expression' };
export const VALUE: Shape = { type: 'type', is_null: 'data', value: 'special' };
export const LOGICAL_TYPE: Shape = { id: 'data', type_info: 'special' };
export const STRUCT_FIELD: Shape = { first: 'data', second: 'type' };

const TYPE_INFO: Shape = { type: 'special', alias: 'data', extension_info: 'special' };

/** Type details by `type`; UNBOUND names a type for the binder to look up. */
export const TYPE_INFO_SHAPES: Readonly<Record<string, Shape>> = {
  DECIMAL_TYPE_INFO: { ...TYPE_INFO, width: 'number', scale: 'number' },
  LIST_TYPE_INFO: { ...TYPE_INFO, child_type: 'type' },
  ARRAY_TYPE_INFO: { ...TYPE_INFO, child_type: 'type', size: 'number' },
  STRUCT_TYPE_INFO: { ...TYPE_INFO, child_types: 'special' },
  GENERIC_TYPE_INFO: TYPE_INFO,
  UNBOUND_TYPE_INFO: {
    ...TYPE_INFO,
    name: 'special',
    catalog: 'special',
    schema: 'special',
    user_type_modifiers: 'values',
  },
};
