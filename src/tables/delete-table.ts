import type { Account } from '../auth/account.js';
import type { Database } from '../storage/database.js';
import { qualifiedName } from '../storage/sql.js';
import { assertCanWrite, findVisibleTable, type TableRef } from './table-access.js';
import { removeTable } from './table-catalog.js';
import { dropVersions } from './table-versions.js';

/** Drops the table, its record and its kept versions together: no reader sees one without the other. */
export async function deleteTable(database: Database, account: Account, ref: TableRef): Promise<void> {
  assertCanWrite(account, ref.namespace);
  await database.write(async (session) => {
    await findVisibleTable(session, account, ref);
    await session.run(`DROP TABLE IF EXISTS ${qualifiedName(ref.namespace, ref.tableName)}`);
    await removeTable(session, ref.namespace, ref.tableName);
    // A deleted table's versions go with it: a new table of that name starts afresh.
    await dropVersions(session, ref);
  });
}
