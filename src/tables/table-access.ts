import { type Account, RESERVED_NAMESPACES } from '../auth/account.js';
import { HANDLE_PATTERN } from '../config/config.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import type { Session } from '../storage/database.js';
import { findTable, type TableRecord } from './table-catalog.js';
import { validateTableName } from './table-name.js';

/**
 * Who may write and see which table (DESIGN §3). Write rights depend on the namespace
 * alone, so they are decided before any table is looked up and a refusal says nothing
 * about what exists. Visibility hides other accounts' private tables as if they were
 * absent: the answer is the same 404 as for a table that does not exist.
 */

/** Shared data set: public, belongs to no account, written by admin keys only. */
export const SHARED_NAMESPACE = 'restaking';

export interface TableRef {
  namespace: string;
  tableName: string;
}

export const fullName = (ref: TableRef) => `${ref.namespace}.${ref.tableName}`;

/** A namespace as a client names it: an account handle, or the shared one. */
export function validateNamespace(value: unknown, field = 'namespace'): string {
  if (typeof value !== 'string') throw badRequest(`field "${field}" must be a string`);
  if (!HANDLE_PATTERN.test(value) || (RESERVED_NAMESPACES.has(value) && value !== SHARED_NAMESPACE)) {
    throw badRequest(
      `${field} ${JSON.stringify(value.slice(0, 100))} is not a namespace: it is an account handle (a lowercase letter, then lowercase letters, digits or _, at most 63)`,
    );
  }
  return value;
}

/** `namespace` and `table_name` from a path, checked like the fields of a body. */
export function tableRefFromPath(namespace: unknown, tableName: unknown): TableRef {
  return {
    namespace: validateNamespace(namespace),
    tableName: validateTableName(tableName, 'table_name'),
  };
}

export function assertCanWrite(account: Account, namespace: string): void {
  if (account.admin) return;
  if (namespace === SHARED_NAMESPACE) {
    throw forbidden(`namespace "${SHARED_NAMESPACE}" is shared data: only admin keys write into it`);
  }
  if (namespace !== account.handle) {
    throw forbidden(
      `this key writes only into its own namespace "${account.handle}", not into "${namespace}"`,
    );
  }
}

export function canSee(account: Account, table: TableRecord): boolean {
  return account.admin || !table.isPrivate || table.namespace === account.handle;
}

export const tableNotFound = (ref: TableRef) => notFound(`table ${fullName(ref)} does not exist`);

/** The table's record if it exists and `account` may see it; otherwise the one 404. */
export async function findVisibleTable(
  session: Session,
  account: Account,
  ref: TableRef,
): Promise<TableRecord> {
  const table = await findTable(session, ref.namespace, ref.tableName);
  if (!table || !canSee(account, table)) throw tableNotFound(ref);
  return table;
}
