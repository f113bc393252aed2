import type { Account } from '../../auth/account.js';
import type { Session } from '../../storage/database.js';
import { qualifiedName } from '../../storage/sql.js';
import { canSee } from '../../tables/table-access.js';
import { findTable } from '../../tables/table-catalog.js';
import type { TableResolver } from './sandbox-sql.js';

/**
 * What a table name in `account`'s SQL means among the uploaded and created tables (DESIGN
 * §10): an unqualified name is in the account's own namespace; a qualified one is any
 * namespace's table the account may see (its own, other accounts' public ones, `restaking`;
 * every table for an admin), by the same rule as every other read path (`canSee`). Only
 * tables recorded in `_service.tables` exist here, so the service's own schemas (`_service`,
 * `_results`) and DuckDB's catalogs never resolve.
 */
export function tableResolver(session: Session, account: Account): TableResolver {
  return async ({ schema, table }) => {
    const record = await findTable(session, schema ?? account.handle, table);
    if (!record || !canSee(account, record)) return undefined;
    return { qualifiedName: qualifiedName(record.namespace, record.tableName), isPrivate: record.isPrivate };
  };
}
