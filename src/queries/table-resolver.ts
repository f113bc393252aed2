// STUB, replaced by the `sandbox` branch (src/queries/table-resolver.ts there): on merge,
// take theirs. It answers the interface the queries code is written against, no more.
import type { Account } from '../auth/account.js';
import { HANDLE_PATTERN } from '../config/config.js';
import type { Session } from '../storage/database.js';
import { qualifiedName } from '../storage/sql.js';
import { canSee } from '../tables/table-access.js';
import { findTable } from '../tables/table-catalog.js';
import type { TableResolver } from './sandbox.js';

/** Uploaded tables a caller may read: their own, others' public ones, `restaking.*`. */
export function tableResolver(session: Session, account: Account): TableResolver {
  return async (name) => {
    const namespace = (name.schema ?? account.handle).toLowerCase();
    const table = name.table.toLowerCase();
    if (!HANDLE_PATTERN.test(namespace)) return undefined;
    const record = await findTable(session, namespace, table);
    if (!record || !canSee(account, record)) return undefined;
    return { qualifiedName: qualifiedName(record.namespace, record.tableName), isPrivate: record.isPrivate };
  };
}
