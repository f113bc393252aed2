import type { WrittenName } from './tree-checker.js';

/** Table names as the sandbox compares and shows them, on either side of the worker. */

export const nameKey = (name: WrittenName): string =>
  JSON.stringify([name.catalog ?? '', name.schema ?? '', name.table]);

/** A name as written, for messages: plain parts bare, others double-quoted. */
export function shownName(name: WrittenName): string {
  return [name.catalog, name.schema, name.table]
    .filter((part): part is string => part !== undefined)
    .map((part) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(part) ? part : `"${part.replaceAll('"', '""')}"`))
    .join('.');
}
