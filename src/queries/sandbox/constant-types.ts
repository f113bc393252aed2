import { isTreeNumber, isTreeObject, type TreeObject, type TreeValue, treeNumberText } from './parse-tree.js';

/**
 * Keeps the type of every number the user wrote through the trip from tree to SQL text and
 * back. DuckDB's SQL writer prints a DOUBLE constant without an exponent when it can
 * (`1e10` as `10000000000.0`, `2.5e-3` as `0.0025`), which parses back as a DECIMAL, and a
 * DECIMAL by its digits only (`5.` as `5`, an INTEGER; `00.50`, a DECIMAL(4,2), as `0.50`, a
 * DECIMAL(3,2)); measured on 1.5.6, see test/queries/sandbox.test.ts. Either would change the
 * query's arithmetic and its result types.
 *
 * So each such constant becomes a CAST to its own type: a DOUBLE is cast from the text
 * DuckDB wrote for it in the tree (the shortest text that reads back as the same double, so
 * no digit changes), a DECIMAL from its own value (a cast between decimals of the same value
 * is exact). The node is changed in place, so whoever holds it (a select list) still does.
 */

const WRAPPED_TYPES = new Set(['DOUBLE', 'DECIMAL']);

/** The constant's type, when it is one whose written SQL may read back as another type. */
function wrappedType(node: TreeObject): TreeObject | undefined {
  if (node.class !== 'CONSTANT' || !isTreeObject(node.value)) return undefined;
  const { type, is_null: isNull } = node.value;
  if (isNull === true || !isTreeObject(type) || !WRAPPED_TYPES.has(String(type.id))) return undefined;
  return type;
}

/** Whether `value` holds a constant that keepConstantTypes changes, at any depth. */
export function holdsRewrittenConstant(value: TreeValue): boolean {
  if (Array.isArray(value)) return value.some(holdsRewrittenConstant);
  if (!isTreeObject(value)) return false;
  if (wrappedType(value)) return true;
  for (const key in value) if (holdsRewrittenConstant(value[key] as TreeValue)) return true;
  return false;
}

/** Rewrites every DOUBLE and DECIMAL constant of a checked tree into a CAST to its type. */
export function keepConstantTypes(value: TreeValue): void {
  if (Array.isArray(value)) {
    for (const item of value) keepConstantTypes(item);
    return;
  }
  if (!isTreeObject(value)) return;
  const type = wrappedType(value);
  if (!type) {
    for (const key in value) keepConstantTypes(value[key] as TreeValue);
    return;
  }
  const constant = value.value as TreeObject;
  const child: TreeObject =
    type.id === 'DOUBLE' && isTreeNumber(constant.value)
      ? {
          ...value,
          alias: '',
          value: {
            type: { id: 'VARCHAR', type_info: null },
            is_null: false,
            value: treeNumberText(constant.value),
          },
        }
      : { ...value, alias: '' };
  const cast: TreeObject = {
    class: 'CAST',
    type: 'OPERATOR_CAST',
    alias: value.alias ?? '',
    query_location: value.query_location ?? null,
    child,
    cast_type: type,
    try_cast: false,
  };
  for (const key of Object.keys(value)) delete value[key];
  Object.assign(value, cast);
}
