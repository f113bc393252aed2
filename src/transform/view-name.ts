import { badRequest } from '../errors.js';
import { MAX_TABLE_NAME_LENGTH } from '../tables/table-name.js';

/**
 * Materialized views' names, as Dune has them: the name given at upsert is the last part and
 * starts with `result_`; the view's full name is `dune.<namespace>.<name>`, its namespace the
 * owner's handle, and it is read in SQL by that name (or `<namespace>.<name>`, or `<name>` in
 * its own namespace) like any table.
 */

export const VIEW_PREFIX = 'result_';
const VIEW_NAME = /^result_[a-z0-9_]+$/;

export interface ViewRef {
  namespace: string;
  name: string;
}

export const viewFullName = (ref: ViewRef) => `dune.${ref.namespace}.${ref.name}`;

/** The `name` of an upsert: the last part only, `result_` then lowercase letters, digits, `_`. */
export function validateViewName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string') throw badRequest(`field "${field}" must be a string`);
  if (value.length > MAX_TABLE_NAME_LENGTH)
    throw badRequest(
      `field "${field}" must be at most ${MAX_TABLE_NAME_LENGTH} characters, got ${value.length}`,
    );
  if (!VIEW_NAME.test(value))
    throw badRequest(
      `field "${field}" must start with "${VIEW_PREFIX}" and hold only lowercase letters, digits and _ (the last part of dune.<namespace>.<name>); got ${JSON.stringify(value.slice(0, 200))}`,
    );
  return value;
}

/**
 * A view as a path names it: `dune.<namespace>.<name>`, `<namespace>.<name>`, or `<name>` in
 * the caller's namespace; undefined when it cannot name a view (then it is absent: 404).
 */
export function parseViewRef(given: string, callerNamespace: string): ViewRef | undefined {
  const parts = given.split('.');
  if (parts.length === 3 && parts[0] === 'dune') parts.shift();
  if (parts.length === 1) parts.unshift(callerNamespace);
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts as [string, string];
  if (!VIEW_NAME.test(name) || name.length > MAX_TABLE_NAME_LENGTH || namespace === '') return undefined;
  return { namespace, name };
}
