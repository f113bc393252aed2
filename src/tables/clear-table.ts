import type { Account } from '../auth/account.js';
import type { Database } from '../storage/database.js';
import { qualifiedName } from '../storage/sql.js';
import { assertCanWrite, findVisibleTable, type TableRef } from './table-access.js';
import { recordCleared } from './table-catalog.js';

/** Removes every row and keeps the table, its schema and its record, in one transaction. */
export async function clearTable(database: Database, account: Account, ref: TableRef): Promise<void> {
  assertCanWrite(account, ref.namespace);
  await database.write(async (session) => {
    await findVisibleTable(session, account, ref);
    await session.run(`DELETE FROM ${qualifiedName(ref.namespace, ref.tableName)}`);
    await recordCleared(session, ref, new Date());
  });
}
